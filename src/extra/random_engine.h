/*
 * The per-thread random engine behind tvm.contrib.random.*: std::mt19937 seeded from the clock,
 * as apache-tvm 0.27 does, and the two float distributions it draws from.  0.27 uses libstdc++'s
 * uniform_real_distribution<float> and normal_distribution<float>; the standard fixes the engine
 * but not the distributions' algorithms (libc++, which our wheels link, returns the two values
 * of each polar-method pair in the other order), so they are written out here to give a seeded
 * engine the same numbers as apache-tvm whatever C++ library the wheel is built with.
 */
#ifndef TVM_RUNTIME_EXTRA_RANDOM_ENGINE_H_
#define TVM_RUNTIME_EXTRA_RANDOM_ENGINE_H_

#include <cmath>
#include <cstdint>
#include <ctime>
#include <random>

namespace tvm_runtime {
namespace extra {

/* The calling thread's engine (seeded with time(nullptr) on first use). */
inline std::mt19937& ThreadEngine() {
  static thread_local std::mt19937 engine(static_cast<unsigned>(std::time(nullptr)));
  return engine;
}

/* Folds TensorFlow-style (seed, seed2) into one 32-bit seed (splitmix64 finaliser on each half). */
inline unsigned FoldSeeds(int64_t seed, int64_t seed2) {
  auto finalize = [](uint64_t z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  uint64_t a = static_cast<uint64_t>(seed);
  uint64_t b = static_cast<uint64_t>(seed2);
  uint64_t folded = finalize(a) ^ (finalize(b) + 0x9e3779b97f4a7c15ULL + (a << 6) + (a >> 2));
  return static_cast<unsigned>((folded >> 32) ^ folded);
}

/*
 * The engine for a call carrying (seed, seed2): seed == seed2 == 0 means "not seeded" (the
 * thread's engine); any other pair re-seeds a per-thread engine, so equal seeds give equal
 * outputs on every call (stateless random ops).
 */
inline std::mt19937& EngineForSeeds(int64_t seed, int64_t seed2) {
  if (seed == 0 && seed2 == 0) return ThreadEngine();
  static thread_local std::mt19937 seeded;
  seeded.seed(FoldSeeds(seed, seed2));
  return seeded;
}

/* A float in [0, 1) from one 32-bit draw: libstdc++'s generate_canonical<float, 24>. */
inline float CanonicalFloat(std::mt19937& engine) {
  float value = static_cast<float>(engine()) / 4294967296.0f;
  return value >= 1.0f ? std::nextafter(1.0f, 0.0f) : value;
}

/* Uniform floats in [low, high), as libstdc++'s uniform_real_distribution<float>. */
class UniformFloat {
 public:
  UniformFloat(float low, float high) : low_(low), high_(high) {}
  float operator()(std::mt19937& engine) const {
    return CanonicalFloat(engine) * (high_ - low_) + low_;
  }

 private:
  float low_;
  float high_;
};

/* Normal floats by Marsaglia's polar method, as libstdc++'s normal_distribution<float>: each
 * accepted pair (x, y) yields y first, then x on the next call. */
class NormalFloat {
 public:
  NormalFloat(float mean, float stddev) : mean_(mean), stddev_(stddev) {}
  float operator()(std::mt19937& engine) {
    float value;
    if (saved_available_) {
      saved_available_ = false;
      value = saved_;
    } else {
      float x, y, r2;
      do {
        x = 2.0f * CanonicalFloat(engine) - 1.0f;
        y = 2.0f * CanonicalFloat(engine) - 1.0f;
        r2 = x * x + y * y;
      } while (r2 > 1.0f || r2 == 0.0f);
      const float mult = std::sqrt(-2.0f * std::log(r2) / r2);
      saved_ = x * mult;
      saved_available_ = true;
      value = y * mult;
    }
    return value * stddev_ + mean_;
  }

 private:
  float mean_;
  float stddev_;
  float saved_ = 0.0f;
  bool saved_available_ = false;
};

}  // namespace extra
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_EXTRA_RANDOM_ENGINE_H_
