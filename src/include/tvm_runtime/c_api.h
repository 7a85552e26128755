/*
 * tvm_runtime/c_api.h -- the versioned C boundary of libtvm_runtime.so.
 *
 * What one of our wheels asks of another goes through this header or through tvm-ffi's own C ABI
 * (tvm/ffi/c_api.h): no C++ type of ours crosses between the core and a backend, so a backend
 * wheel built against core 0.1.x keeps working when the core is upgraded within the same ABI
 * major.
 *
 * The C++ edge is tvm-ffi's, and it is real: every DSO of ours also uses tvm-ffi's C++ API, whose
 * objects are header-inline over its C ABI except for one interface, tvm::ffi::ModuleObj.  The
 * device and BYOC modules a backend creates subclass it, and libtvm_ffi, the core and the Relax VM
 * call their virtual functions (GetFunction, SaveToBytes, ...); backends throw tvm::ffi::Error,
 * which tvm-ffi's safe-call wrappers catch and rethrow across DSOs (Python callbacks, imported
 * modules).  So every DSO must be built for the C++ ABI libtvm_ffi was built for: the Itanium ABI
 * with a libstdc++-compatible exception runtime on Linux (ci/toolchain/zig-common.cmake links
 * the system's libstdc++.so.6 and libgcc_s.so.1) and the system's libc++abi on macOS, the MSVC ABI
 * on Windows (a MinGW-built subclass gets another vtable layout and return convention, and its
 * exceptions do not cross).  And tvm-ffi's range in the core's [tool.tvm-runtime] is part of this
 * contract: a tvm-ffi release that changes ModuleObj's vtable breaks built backends although no
 * line of ours changed, which is why that range stops below tvm-ffi's next minor.
 *
 * Five parts make up the contract:
 *  1. the TVMBackend* functions that TVM-compiled host code calls (their addresses are also
 *     injected into every loaded library as "context symbols");
 *  2. the device registry: a backend fills a TVMRuntimeDeviceAPI table and hands it to the core;
 *  3. the two entry points every backend DSO exports so the Python hook can version-check it
 *     before anything is registered, and the one compatibility rule both sides apply;
 *  4. the string-named global functions (tvm-ffi's registry) the core, the backends and their
 *     Python hooks look each other up by: documented here because renaming one breaks a wheel
 *     built against an older core just as surely as changing a struct would;
 *  5. the core's own start-up exports, called by `import tvm`.
 *
 * Exports: libtvm_runtime.so exports exactly the TVM_RUNTIME_DLL functions declared below; a
 * backend DSO exports exactly the two entry points of part 3 (its symbols are hidden otherwise,
 * see TVMRuntimeCommon.cmake).  tests/packaging/test_c_api_contract.py holds every installed DSO
 * and every backend's global functions to these lists.
 *
 * Error convention for every `int`-returning function pointer below: return 0 on success; on
 * failure set tvm-ffi's raised error and return -1: TVMFFIErrorSetRaised(error object) keeps the
 * C++ backtrace (what tvm_runtime/backend/error.h's GuardCall does), while
 * TVMFFIErrorSetRaisedFromCStr(kind, message) suffices for plain C.  The core rethrows that same
 * error object, so it reaches Python with its message and backtrace unchanged.
 */
#ifndef TVM_RUNTIME_C_API_H_
#define TVM_RUNTIME_C_API_H_

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>
#include <tvm/ffi/c_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TVM_RUNTIME_DLL __attribute__((visibility("default")))

/*
 * ABI version of this header, encoded as (major << 16) | minor.  A backend built against
 * (major, minor) loads on a core with the same major and a minor >= the backend's: minors only
 * append (struct fields at the end, new functions, new string-named globals).
 *
 * History: docs/c-abi-changelog.md (one entry per minor; add the new one there when you bump).
 */
/* Predefining the major (-DTVM_RUNTIME_ABI_VERSION_MAJOR=2) is for the version-skew tests only:
 * they build wheels of a pretend next ABI to prove that both sides refuse a mismatched pair. */
#ifndef TVM_RUNTIME_ABI_VERSION_MAJOR
#define TVM_RUNTIME_ABI_VERSION_MAJOR 1
#endif
#define TVM_RUNTIME_ABI_VERSION_MINOR 4
#define TVM_RUNTIME_ABI_VERSION \
  ((uint32_t)((TVM_RUNTIME_ABI_VERSION_MAJOR << 16) | TVM_RUNTIME_ABI_VERSION_MINOR))

#define TVM_RUNTIME_ABI_MAJOR_OF(version) ((uint32_t)(version) >> 16)
#define TVM_RUNTIME_ABI_MINOR_OF(version) ((uint32_t)(version) & 0xFFFFu)

/*
 * THE compatibility rule, the only place it is written down: can a core providing ABI
 * `provided` host code (a backend DSO, a device-API table) built against ABI `required`?
 * Same major, and the core's minor is at least the required one.  Inline so that a backend
 * applies exactly the rule of the headers it was compiled with, without calling the core.
 * Returns 1 when compatible, else 0.
 */
static inline int TVMRuntimeABICompatible(uint32_t provided, uint32_t required) {
  return TVM_RUNTIME_ABI_MAJOR_OF(provided) == TVM_RUNTIME_ABI_MAJOR_OF(required) &&
         TVM_RUNTIME_ABI_MINOR_OF(provided) >= TVM_RUNTIME_ABI_MINOR_OF(required);
}

/* Alignment every allocation must honour: compiled kernels assume 64-byte aligned data. */
#define TVM_RUNTIME_ALLOC_ALIGNMENT 64

/* ---------------------------------------------------------------------------------------- */
/* 1. Functions called by TVM-compiled host code (signatures fixed by apache-tvm 0.27).      */
/* ---------------------------------------------------------------------------------------- */

typedef struct {
  void* sync_handle;
  int32_t num_task;
} TVMParallelGroupEnv;

typedef int (*FTVMParallelLambda)(int task_id, TVMParallelGroupEnv* penv, void* cdata);

TVM_RUNTIME_DLL void* TVMBackendAllocWorkspace(int device_type, int device_id, uint64_t nbytes,
                                               int dtype_code_hint, int dtype_bits_hint);
TVM_RUNTIME_DLL int TVMBackendFreeWorkspace(int device_type, int device_id, void* ptr);
TVM_RUNTIME_DLL int TVMBackendParallelLaunch(FTVMParallelLambda flambda, void* cdata, int num_task);
TVM_RUNTIME_DLL int TVMBackendParallelBarrier(int task_id, TVMParallelGroupEnv* penv);

/* AnyLists: the register, constant and function arrays (16-byte TVMFFIAny slots) that Relax code
 * compiled with exec_mode="compiled" works on.  Each returns 0, or -1 with tvm-ffi's raised error
 * set.  args[arg_offset] = anylist[index] as a borrowed view: */
TVM_RUNTIME_DLL int TVMBackendAnyListSetPackedArg(void* anylist, int index, TVMFFIAny* args,
                                                  int arg_offset);
/* anylist[index] = None, releasing what it held: */
TVM_RUNTIME_DLL int TVMBackendAnyListResetItem(void* anylist, int index);
/* anylist[index] = args[ret_offset], taking over the reference the return slot owned: */
TVM_RUNTIME_DLL int TVMBackendAnyListMoveFromPackedReturn(void* anylist, int index, TVMFFIAny* args,
                                                          int ret_offset);

/* ---------------------------------------------------------------------------------------- */
/* 2. Device registry.                                                                        */
/* ---------------------------------------------------------------------------------------- */

/* Attribute kinds, numbered as apache-tvm's DeviceAttrKind (Python Device properties rely on it).
 */
typedef enum {
  kTVMRuntimeAttrExist = 0,
  kTVMRuntimeAttrMaxThreadsPerBlock = 1,
  kTVMRuntimeAttrWarpSize = 2,
  kTVMRuntimeAttrMaxSharedMemoryPerBlock = 3,
  kTVMRuntimeAttrComputeVersion = 4,
  kTVMRuntimeAttrDeviceName = 5,
  kTVMRuntimeAttrMaxClockRate = 6,
  kTVMRuntimeAttrMultiProcessorCount = 7,
  kTVMRuntimeAttrMaxThreadDimensions = 8,
  kTVMRuntimeAttrMaxRegistersPerBlock = 9,
  kTVMRuntimeAttrGcnArch = 10,
  kTVMRuntimeAttrApiVersion = 11,
  kTVMRuntimeAttrDriverVersion = 12,
  kTVMRuntimeAttrL2CacheSizeBytes = 13,
  kTVMRuntimeAttrTotalGlobalMemory = 14,
  kTVMRuntimeAttrAvailableGlobalMemory = 15,
  kTVMRuntimeAttrImagePitchAlignment = 16,
} TVMRuntimeDeviceAttrKind;

/*
 * A backend's device API: a table of C function pointers plus an opaque `self`.
 *
 * Rules:
 *  - `struct_size` and `abi_version` come first and are set to sizeof(TVMRuntimeDeviceAPI) and
 *    TVM_RUNTIME_ABI_VERSION as the backend saw them at compile time.  The core reads only the
 *    fields that fit in `struct_size`, so new optional fields can be appended in a minor version;
 *    it refuses a table smaller than TVM_RUNTIME_DEVICE_API_MIN_SIZE (the fields of ABI 1.0).
 *  - "required" pointers must be non-NULL; "optional" ones may be NULL and get the documented
 *    default.
 *  - Attribute values are written to `out` as *owned* TVMFFIAny values (for strings create them
 *    with TVMFFIStringFromByteArray); leave `out` as None (type_index 0) if unsupported.
 *  - Nothing here may touch a vendor driver before the first call that needs a device; for
 *    kTVMRuntimeAttrExist a missing driver is reported as 0, not as an error.
 *  - `data` pointers are opaque handles chosen by the backend (a raw pointer, a cl_mem
 *    descriptor, ...); the core passes them through unchanged.
 */
typedef struct TVMRuntimeDeviceAPI {
  size_t struct_size;
  uint32_t abi_version;
  int32_t device_type; /* DLDeviceType this table serves */
  /* Short lowercase name, e.g. "opencl".  The core keeps the pointer, not a copy, for the rest
   * of the process (tables are never unregistered): point it at static storage (a literal). */
  const char* name;
  void* self; /* passed back as the first argument of every call */

  /* required */
  int (*set_device)(void* self, int32_t device_id);
  int (*get_attr)(void* self, int32_t device_id, int32_t kind, TVMFFIAny* out);
  int (*alloc_data)(void* self, int32_t device_id, uint64_t nbytes, uint64_t alignment,
                    DLDataType type_hint, void** out_data);
  int (*free_data)(void* self, int32_t device_id, void* data);
  /* Flat copy of `nbytes`; at least one side is this backend's device, the other may be CPU.
   * Asynchronous on `stream` is allowed: the core calls stream_sync when it needs the data. */
  int (*copy_data)(void* self, const void* from, uint64_t from_offset, void* to, uint64_t to_offset,
                   uint64_t nbytes, DLDevice dev_from, DLDevice dev_to, DLDataType type_hint,
                   void* stream);
  /* Wait for all work on `stream` (NULL = the device's default stream). */
  int (*stream_sync)(void* self, int32_t device_id, void* stream);

  /* optional */
  int (*stream_create)(void* self, int32_t device_id, void** out_stream); /* NULL: no streams */
  int (*stream_free)(void* self, int32_t device_id, void* stream);
  int (*stream_sync_from_to)(void* self, int32_t device_id, void* src, void* dst); /* NULL: sync */
  /* Workspaces: NULL means the core's per-thread pool on top of alloc_data/free_data. */
  int (*alloc_workspace)(void* self, int32_t device_id, uint64_t nbytes, DLDataType type_hint,
                         void** out_data);
  int (*free_workspace)(void* self, int32_t device_id, void* data);
  /* Target-detection properties (e.g. Vulkan's "supports_float16"); out None if unknown. */
  int (*get_target_property)(void* self, int32_t device_id, const char* key, TVMFFIAny* out);
  /* Human-readable driver state for diagnostics: write an owned string ("" when the driver
   * loaded fine, otherwise what is missing and how to fix it). */
  int (*driver_status)(void* self, TVMFFIAny* out);

  /* (since 1.3) TVM_RUNTIME_DEVICE_* properties of this device.  For a table of an older minor
   * (struct_size too small to hold it) the core assumes what ABI 1.2 cores hard-coded: pointer
   * arithmetic on CPU, CUDA (device, host, managed) and ROCm (device, host) memory only. */
  uint64_t flags;
} TVMRuntimeDeviceAPI;

/* The size of an ABI 1.0 table (every field up to driver_status): the smallest the core accepts. */
#define TVM_RUNTIME_DEVICE_API_MIN_SIZE \
  (offsetof(TVMRuntimeDeviceAPI, driver_status) + sizeof(void*))

/* flags: `data` handles are addresses, so `(char*)data + n` is the handle of the memory n bytes
 * further on.  The core then folds offsets into the pointer where compiled kernels need
 * byte_offset == 0 (the Relax VM's tensors carved from a storage).  Without it (cl_mem, Vulkan
 * and WebGPU buffer descriptors) offsets always travel in byte_offset. */
#define TVM_RUNTIME_DEVICE_POINTER_ARITHMETIC ((uint64_t)1 << 0)

/* ABI version of the loaded core (TVM_RUNTIME_ABI_VERSION it was built with). */
TVM_RUNTIME_DLL uint32_t TVMRuntimeGetABIVersion(void);

/*
 * Register a device API table.  The core copies the table (so it may live on the stack) and
 * validates size, version and required pointers.  Registering a device type that is already
 * served fails unless `allow_override` is non-zero.
 */
TVM_RUNTIME_DLL int TVMRuntimeRegisterDeviceAPI(const TVMRuntimeDeviceAPI* api, int allow_override);

/* The registered table for a device type, or NULL if no backend serves it. */
TVM_RUNTIME_DLL const TVMRuntimeDeviceAPI* TVMRuntimeGetDeviceAPI(int32_t device_type);

/* ---------------------------------------------------------------------------------------- */
/* 3. Entry points exported by every backend DSO (loaded RTLD_LOCAL by TVMRuntimeLoadBackend). */
/* ---------------------------------------------------------------------------------------- */

/* Returns TVM_RUNTIME_ABI_VERSION as the backend was compiled. Must not touch any driver. */
typedef uint32_t (*TVMRuntimeBackendABIVersionFn)(void);
/* Registers device APIs and module loaders.  Idempotent, never throws; on failure returns
 * non-zero and writes a NUL-terminated reason into err[0..err_len). */
typedef int (*TVMRuntimeBackendRegisterFn)(char* err, size_t err_len);

#define TVM_RUNTIME_BACKEND_ABI_VERSION_SYMBOL "TVMRuntimeBackendABIVersion"
#define TVM_RUNTIME_BACKEND_REGISTER_SYMBOL "TVMRuntimeBackendRegister"

/*
 * (since 1.1) Whether the loaded core can host a backend built for `backend_abi_version` (the
 * value its TVMRuntimeBackendABIVersion returned), by TVMRuntimeABICompatible.  Returns 0 when it
 * can; otherwise returns 1 and writes a NUL-terminated reason, truncated to err_len, such as
 * "built for core ABI 2.0, but the loaded tvm-runtime core provides ABI 1.1".  For loaders that
 * are not C (the Python hook) so they apply the core's rule instead of a copy of it.
 */
TVM_RUNTIME_DLL int TVMRuntimeCheckBackendABI(uint32_t backend_abi_version, char* err,
                                              size_t err_len);

/* ---------------------------------------------------------------------------------------- */
/* 4. String-named global functions (ABI 1.x).                                               */
/* ---------------------------------------------------------------------------------------- */
/*
 * Global functions live in tvm-ffi's process-wide registry (TVMFFIFunctionSetGlobal /
 * TVMFFIFunctionGetGlobal) and are found by name, so the names and signatures below are part
 * of the contract exactly like the structs above: within ABI major 1 a name is never removed
 * or re-typed, and a new one is appended with the minor that introduced it.  Signatures use
 * tvm-ffi types; "since" is the ABI minor; registration by a backend happens inside
 * TVMRuntimeBackendRegister (never in a static constructor) with override=true.
 *
 * 4a. Registered by every backend DSO, called by the core / tvm-ffi:
 *   ffi.Module.load_from_bytes.<kind>   (Bytes payload) -> ffi.Module            since 1.0
 *       Loader for the device modules of `kind` embedded in a compiled artifact ("opencl",
 *       "vulkan", "cuda").  tvm-ffi calls it while loading a library; the core pre-registers a
 *       placeholder for every declared kind that tells the user which wheel to install, and the
 *       backend's registration replaces it (tvm_runtime/backend/gpu/device_module.h).
 *   runtime.timer.<device name>   (Device dev) -> Function timer               since 1.2
 *       Optional (apache-tvm 0.27 has the same hook).  When registered, the core's time
 *       evaluator (runtime.RPCTimeEvaluator) times each round on the device: timer("start"),
 *       the calls, timer("stop"), then timer("elapsed_ns") -> int, which waits for the stop.
 *       Without it a round is timed on the host clock between two stream_sync calls.
 *   runtime.library_provider.<stem>  (str soname) -> None                     since 1.3
 *       Optional.  When dlopen of an artifact fails because a library its host code links
 *       (DT_NEEDED <soname>, e.g. libcudart.so.12 for CUTLASS kernels) is missing, the core
 *       calls the provider for the soname's stem ("libcudart"), which loads that library into
 *       the process (from its pip wheel) or raises naming what to install, and opens the
 *       artifact once more.  tvm-runtime-cuda provides libcudart.
 *
 * 4b. Registered by the core, relied on by the Python hooks of the backend wheels
 *     (tvm.backend.<name>) and the loader in tvm.backend:
 *   runtime.DeviceDriverStatus      (int device_type) -> str                    since 1.0
 *       "" when the backend's driver is usable, else what is missing and how to fix it (the
 *       table's driver_status).  RuntimeError if no backend serves device_type.
 *   runtime.DeviceTypeName          (int device_type) -> str                    since 1.0
 *       "opencl", "cuda", ...; "device_type_<n>" for unknown codes.
 *   runtime.NoteBackendFailure      (int device_type, str reason) -> None       since 1.0
 *       Remembers why an installed backend failed to load; later "no backend for device"
 *       errors quote it instead of suggesting `pip install`.
 *   runtime.DistributionForDevice   (int device_type) -> str                    since 1.0
 *       The wheel that serves device_type ("" if none does).
 *   runtime.RegisteredDeviceTypes   () -> Array<int>                            since 1.0
 *       Device types with a registered device-API table.
 *   runtime.GetDeviceTargetProperty (Device dev, str key) -> Any                since 1.0
 *       The table's get_target_property (None if the backend has none).
 *   runtime.LoadBackend             (str name) -> str                           since 1.4
 *       TVMRuntimeLoadBackend(name, NULL) for C++ (part 5): the loaded DSO's path, or an
 *       error with the reason.
 *   The other way round, registered by the core's Python package and called by the core DSO
 *   (when present) for its "cannot find function" errors:
 *   tvm_runtime.backend.distribution_status (str distribution) -> str
 *       "not installed", "loaded <version>", or why the installed wheel is not loaded.
 *   Registered by the core for builtins in backend wheels that keep per-VM state:
 *   tvm_runtime.vm.get_or_create_extension (vm_ctx, str key, Function factory) -> Object
 *       The object the Relax VM behind vm_ctx keeps under key, made by factory() on first use
 *       and released with that VM (tvm_runtime/backend/vm_extension.h).  Backends look it up
 *       when first needed and, on an older core without it, say to upgrade tvm-runtime.
 *
 * 4c. Registered by the core under apache-tvm 0.27's names (compiled artifacts and apache-tvm's
 *     Python API call them; fixed by apache-tvm, listed so nobody renames them):
 *   __tvm_set_device (int device_type, int device_id), called by compiled GPU host code before
 *   each launch; runtime.GetDeviceAttr, runtime.Device_Stream{Create,Free,Sync,SyncFromTo},
 *   runtime.Device_SetStream, runtime.TVMSetStream, runtime.RuntimeEnabled,
 *   runtime.TVMTensor*, runtime.{Save,Load}Params[FromFile/ToFile], runtime.NumThreads,
 *   runtime.config_threadpool, runtime.RPCTimeEvaluator, vm.builtin.*, and the Relax loaders
 *   ffi.Module.load_from_{bytes,file}.relax.VMExecutable.
 *
 * 4d. apache-tvm names registered by a backend wheel (fixed by apache-tvm, and declared in the
 *     wheel's `global-functions` of [tool.tvm-runtime] so that the core's "cannot find function"
 *     errors name the wheel):
 *   device_api.vulkan.get_target_property (Device dev, str key) -> Any          since 1.0
 *       Vulkan capability by apache-tvm's key names (tvm.target "-from_device").
 *   tvm.contrib.sort.*, tvm.contrib.random.*, tvm.runtime.threading.*: the contrib functions
 *       of tvm-runtime-extra.
 *   runtime.disco.*, runtime.disco.nccl.*, runtime.disco.rccl.*: Disco's worker side (the
 *       collectives compiled tensor-parallel models call, the cpu collective library) in
 *       tvm-runtime-extra; NCCL in tvm-runtime-cuda, RCCL in tvm-runtime-rocm.
 *   vm.builtin.cuda_graph.*: the CUDA-graph builtins of models compiled with
 *       relax.backend.use_cuda_graph, in tvm-runtime-cuda.
 *   runtime.cuTensorMapEncodeTiled: the TMA tensor maps the host code of Hopper kernels
 *       (cp.async.bulk.tensor) encodes before a launch, in tvm-runtime-cuda.
 *   device_api.metal, ffi.Module.create.metal, metal.ResetGlobalState,
 *   metal.GetProfileCounters, metal.ResetProfileCounters: the names the macOS apache-tvm
 *       wheel's Metal DSO registers, in tvm-runtime-metal (device_api.metal returns this
 *       backend's C device table: apache-tvm's C++ DeviceAPI object exists only in its runtime).
 *
 * 4e. Private to one wheel (its DSO and its own Python hook ship together, so they may change
 *     with the wheel; listed to reserve the prefixes).  The convention: a backend named <name>
 *     (DSO libtvm_runtime_<name>.so, hook tvm.backend.<name>) registers its private globals as
 *     `tvm_runtime.<name>.<snake_case>`, from C++ with backend::SetGlobalFunction
 *     (tvm_runtime/backend/global_function.h), and nothing outside 4a, 4d and its own prefix:
 *   tvm_runtime.cuda.*        the CUDA DSO: nvrtc_info, compile_source, describe_module,
 *                             cache_dir, cache_info, driver_info, event_*
 *                             (tvm_runtime/backend/gpu/gpu_events.h), cublaslt_status,
 *                             cudnn_status;
 *                             the CUDA hook (Python): locate_nvrtc, called by the DSO on the
 *                             first runtime compile: (int driver_major) -> list[dict],
 *                             locate_nccl, called when a Disco session first initialises
 *                             NCCL: () -> list[str] of paths, and locate_library, called when
 *                             cuBLASLt, cuDNN or the CUDA runtime is first needed:
 *                             (str name) -> list[str] of paths;
 *   tvm_runtime.rocm.*        the ROCm DSO: describe_module, describe_code_object, driver_info,
 *                             event_*;
 *   tvm_runtime.vulkan.*      the Vulkan DSO: device_stats, validation_messages,
 *                             validation_enabled (its hook's diagnostics), cache_info;
 *   tvm_runtime.webgpu.*      the WebGPU DSO: set_library_candidates (called by its hook with
 *                             the wgpu-native libraries it found), adapter_info, device_stats;
 *   tvm_runtime.opencl.*      the OpenCL DSO: cache_info;
 *   tvm_runtime.dnnl.*        the DSO of tvm-runtime-dnnl: library_status, library_path (its
 *                             hook's library_status and diagnostics);
 *   tvm_runtime.metal.*       the DSO of tvm-runtime-metal (none registered today);
 *   tvm_runtime.extra.*       the DSO of tvm-runtime-extra (none registered today; Disco's
 *                             internals have a prefix of their own because the GPU
 *                             backends call two of them, see 4f).
 *   Every backend with a persistent kernel cache (tvm_runtime/backend/cache/persistent_cache.h)
 *   registers `tvm_runtime.<name>.cache_info` () -> dict (dir, enabled, max_bytes, entries,
 *   bytes, this process's hits/misses/rejected/stored/..., last_problem), which
 *   `python -m tvm.backend` shows.
 *
 * File names inside a backend follow one convention as well: <vendor>_api.h declares the vendor
 * API subset the backend uses, <vendor>_library.{h,cc} opens the vendor library at first use
 * (through OpenVendorApi of tvm_runtime/backend/vendor/vendor_library.h, the one way to open one),
 * <vendor>_error.{h,cc} turns vendor status codes into errors, <name>_*.{h,cc} hold the device,
 * module and kernel code (files about one format are named for it: spirv_info, code_object), and
 * register.cc defines the two entry points of part 3.
 *
 * 4f. Registered by the extra DSO (Disco, tvm-runtime-extra 0.1.0+), called by the GPU backends'
 *     NCCL/RCCL code (tvm_runtime/backend/disco/disco_nccl.h) on a Disco worker's thread; not
 *     part of the core's ABI (the core neither registers nor calls them):
 *   tvm_runtime.disco.*       the extra wheel's Disco internals (declared in its
 *                             `global-functions`); the GPU backends call two of them:
 *   tvm_runtime.disco.worker_info () -> Shape [worker_id, num_workers, num_groups,
 *                             local_worker_id]
 *   tvm_runtime.disco.set_ccl     (str ccl, Device default_device) -> None
 */

/* ---------------------------------------------------------------------------------------- */
/* 5. The core's start-up exports (libtvm_runtime.so only).                                   */
/* ---------------------------------------------------------------------------------------- */

/* Registers everything the core provides (the CPU device, the globals of part 4, the context
 * symbols of part 1).  Runs once, when the dynamic loader loads libtvm_runtime (a program that
 * links it needs no call of its own); every call returns that first outcome: 0, or 1 with a
 * NUL-terminated reason truncated to err_len (e.g. a global that another runtime in the process
 * already registered).  `import tvm` calls it to report that reason.  Never throws. */
TVM_RUNTIME_DLL int TVMRuntimeInitialize(char* err, size_t err_len);

/* The core's distribution version ("0.1.0"), a static string. */
TVM_RUNTIME_DLL const char* TVMRuntimeVersion(void);

/* (since 1.4) Loading a backend from any host, Python or not.  TVMRuntimeLoadBackend loads
 * backend `name` ("opencl": the DSO libtvm_runtime_<name>.so) and registers it; idempotent per
 * name.  `path` names the DSO, or is NULL to find it: one the program already links or loaded,
 * then each directory of $TVM_RUNTIME_BACKEND_PATH (':'-separated), the core's own directory
 * (a deploy bundle's <prefix>/lib), and <core dir>/../backend/<name>/ (the wheels' layout in a
 * Python environment).  The DSO is opened RTLD_LOCAL, its TVMRuntimeBackendABIVersion checked
 * by TVMRuntimeCheckBackendABI before TVMRuntimeBackendRegister runs.  Returns one of the
 * codes below; on failure writes a NUL-terminated reason, truncated to err_len, worded as
 * `tvm.backend` words it (e.g. "Cannot load TVM backend 'opencl': it is not installed. Install
 * it: pip install tvm-runtime-opencl. ...").  Never throws.  The same from C++, raising
 * tvm::ffi::Error: the global runtime.LoadBackend (str name) -> str path.
 *
 * Without a call, a backend an artifact or a device needs is loaded the same way on its first
 * use ("on demand"), unless TVM_DEVICE_BACKEND_AUTOLOAD=0 or TVM_BACKENDS (a comma-separated
 * allow-list) leaves it out, or the host turned it off: TVMRuntimeSetBackendOnDemand(0), what
 * `import tvm` does, since Python's tvm.backend loader manages backends itself (through
 * TVMRuntimeLoadBackend with the path its hook declares). */
#define TVM_RUNTIME_BACKEND_LOADED 0
#define TVM_RUNTIME_BACKEND_LOAD_FAILED 1  /* missing file, dlopen, entry points, registration */
#define TVM_RUNTIME_BACKEND_ABI_MISMATCH 2 /* built for an incompatible core ABI */
#define TVM_RUNTIME_BACKEND_NOT_FOUND 3    /* path NULL and no installed copy found */
TVM_RUNTIME_DLL int TVMRuntimeLoadBackend(const char* name, const char* path, char* err,
                                          size_t err_len);
TVM_RUNTIME_DLL void TVMRuntimeSetBackendOnDemand(int enabled);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TVM_RUNTIME_C_API_H_ */
