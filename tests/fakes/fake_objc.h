/*
 * The fake Objective-C runtime of the Metal backend tests (fake_objc.c), as the fake Metal
 * (fake_metal.c) sees it: classes are tables of C functions keyed by selector, objects start
 * with their class pointer, as real Objective-C objects do.
 */
#ifndef TVM_RUNTIME_TESTS_METAL_FAKE_OBJC_H_
#define TVM_RUNTIME_TESTS_METAL_FAKE_OBJC_H_

#include <stdint.h>

#define FAKE_OBJC_MAGIC 0x0B1EC7EDu

typedef struct FakeClass FakeClass;
typedef struct FakeObject FakeObject;
typedef const char* SEL;  // an interned selector name
typedef void* id;

struct FakeObject {
  FakeClass* isa;  // first, as in every Objective-C object
  uint32_t magic;  // FAKE_OBJC_MAGIC: anything else is not an object (a bad prototype)
  int32_t refcount;
  uint64_t serial;                    // numbers objects in the log
  void (*dealloc)(FakeObject* self);  // frees what the object owns (may be NULL)
};

/* Defines (or returns) the class `name`, whose methods fall back to `super`'s. */
FakeClass* fake_objc_class(const char* name, FakeClass* super);
/* Adds an instance method (class_method = 0) or a class method. `stret` marks a method that
 * returns a struct in memory: on x86_64 it must be reached through objc_msgSend_stret. */
void fake_objc_method(FakeClass* cls, int class_method, const char* selector, void* imp, int stret);
/* A new object of `size` bytes (header included), refcount 1. */
void* fake_objc_new(FakeClass* cls, uint64_t size, void (*dealloc)(FakeObject*));
id fake_objc_autorelease(id object);
void fake_objc_retain(id object);
void fake_objc_release(id object);
const char* fake_objc_class_name(id object);
/* Live objects of the class named `name` (all classes for NULL). */
int64_t fake_objc_live(const char* name);

#endif  // TVM_RUNTIME_TESTS_METAL_FAKE_OBJC_H_
