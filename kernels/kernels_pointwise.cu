// Translation unit 1 of 2: the pointwise and data-movement kernels.
#include "kernels/activation.cuh"
#include "kernels/broadcast.cuh"
#include "kernels/data.cuh"
#include "kernels/pad.cuh"
#include "kernels/sgd.cuh"
#include "kernels/transpose.cuh"
