/* Registration functions of libtvm_runtime_extra.so, called once from register.cc. */
#ifndef TVM_RUNTIME_EXTRA_EXTRA_REGISTER_H_
#define TVM_RUNTIME_EXTRA_EXTRA_REGISTER_H_

namespace tvm_runtime {
namespace extra {

void RegisterSortFunctions();
void RegisterTopkFunction();
void RegisterRandomFunctions();
void RegisterThreadingFunctions();

}  // namespace extra
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_EXTRA_EXTRA_REGISTER_H_
