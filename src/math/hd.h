/* hd.h - BOAR_HD marks math that both the host compiler and nvcc compile.
 *
 * The headers of src/math/ hold every formula of training once: a loss
 * and its derivative, the optimizers' rates, regularization, the MF step.
 * The CPU sweeps (cc) and the CUDA kernels (nvcc) include the same
 * functions, so the two engines cannot drift apart (XGBoost shares its
 * objectives the same way, with XGBOOST_DEVICE). The functions are pure:
 * they read and return values, and leave memory ordering (relaxed loads,
 * compare-and-swap, atomicAdd) to the engine that calls them.
 */
#ifndef BOAR_MATH_HD_H
#define BOAR_MATH_HD_H

#ifdef __CUDACC__
#define BOAR_HD static inline __host__ __device__
#else
#define BOAR_HD static inline
#endif

#endif
