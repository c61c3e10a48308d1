/* th_nn_build_flags: which paths this build of the kernels compiled in. */
#include "th_nn.h"
#include "th_nn_support.h"

int32_t th_nn_build_flags(void)
{
    return (TH_NN_HAS_DSP ? 1 : 0) | (TH_NN_FILTER_INTERLEAVED ? 2 : 0) | (TH_NN_DSP_NATIVE ? 4 : 0) |
           (TH_NN_MVE ? 8 : 0);
}
