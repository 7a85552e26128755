# CMake package of the tvm-runtime core, installed inside the wheel at tvm/share/cmake/tvm_runtime.
# Backends find it with find_package(tvm_runtime CONFIG) (see TVMRuntimeBackend.cmake).
include(CMakeFindDependencyMacro)
find_dependency(tvm_ffi CONFIG)
include("${CMAKE_CURRENT_LIST_DIR}/tvm_runtime-targets.cmake")
include("${CMAKE_CURRENT_LIST_DIR}/TVMRuntimeCommon.cmake")
include("${CMAKE_CURRENT_LIST_DIR}/TVMRuntimeBackend.cmake")
# Root of the installed `tvm` Python package (…/site-packages/tvm).
get_filename_component(TVM_RUNTIME_PACKAGE_DIR "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
