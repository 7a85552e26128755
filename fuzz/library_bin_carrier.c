/*
 * A shared library with nothing in it but a writable `__tvm_ffi__library_bin`: the library-bin
 * fuzz target writes each input there, in memory and in the file (the core's check reads the
 * file), and loads this library, so the check, tvm-ffi's container parser and our module
 * loaders see the input exactly as they would see a real exported artifact's.  Initialized,
 * so the symbol has bytes in the file (.data, not .bss).
 */
#define CARRIER_CAPACITY (1 << 20)

__attribute__((visibility("default"))) unsigned char __tvm_ffi__library_bin[CARRIER_CAPACITY] = {1};
__attribute__((visibility("default"))) const unsigned long tvmrt_fuzz_carrier_capacity =
    CARRIER_CAPACITY;
