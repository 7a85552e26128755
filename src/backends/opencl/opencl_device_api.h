/*
 * The OpenCL implementation of the core's device table (tvm_runtime/c_api.h): attributes,
 * buffers, copies, streams (extra in-order command queues) and driver diagnostics.
 */
#ifndef TVM_RUNTIME_BACKENDS_OPENCL_OPENCL_DEVICE_API_H_
#define TVM_RUNTIME_BACKENDS_OPENCL_OPENCL_DEVICE_API_H_

#include <tvm_runtime/backend/device_api_table.h>
#include <tvm_runtime/backend/gpu/numbered_devices.h>

#include <string>

#include "opencl_runtime.h"

namespace tvm_runtime {
namespace opencl {

class OpenCLDeviceAPI final : public backend::NumberedDevices<kDeviceTypeOpenCL, OpenCLRuntime> {
 public:
  TVM_RUNTIME_NUMBERED_DEVICES_OVERRIDES;
  TVM_RUNTIME_DEVICE_BACKEND_STREAM_OVERRIDES;
};

}  // namespace opencl
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_OPENCL_OPENCL_DEVICE_API_H_
