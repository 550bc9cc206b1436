// Translation unit 2 of 2: the kernels with reductions.
#include "kernels/batchnorm.cuh"
#include "kernels/pool.cuh"
#include "kernels/softmax_xent.cuh"
