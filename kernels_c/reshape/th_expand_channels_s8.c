/* th_expand_channels_s8: a convolution's output rebuilt from the channels that were computed.
 *
 * Some output channels of a trained model requantize to the same value whatever the input
 * (near-dead channels: a tiny multiplier under a huge bias, or a bound the activation
 * clamps away). The host proves it from the weights and quantization, the compiled backend
 * runs the convolution for the other channels only, and this writes each output pixel: the
 * constants (one pixel's worth, `pixel`) with the computed values at their channel
 * positions. `live` must not overlap `output`.
 */
#include <stddef.h>
#include <string.h>

#include "th_nn.h"
#include "th_nn_shape.h"

th_status th_expand_channels_s8(const th_context *ctx, const int8_t *live, int32_t pixels,
                                int32_t live_count, const uint16_t *live_channel,
                                const int8_t *pixel, int32_t channels, int8_t *output)
{
    (void)ctx;
    if (live == NULL || pixel == NULL || output == NULL || pixels < 0 || live_count < 0 ||
        channels <= 0 || live_count > channels || (live_count > 0 && live_channel == NULL)) {
        return TH_ERR_ARG;
    }
#if TH_NN_MVE
    /* Helium: the constants by a tail-predicated copy, the computed values by VSTRB scatters
     * of 8 at the halfword channel offsets (the host's channels are distinct, so the order of
     * the stores does not matter). */
    for (int32_t p = 0; p < pixels; p++) {
        th_nn_mve_move(output, pixel, (size_t)channels);
        int32_t j = 0;
        for (; j + 8 <= live_count; j += 8) {
            vstrbq_scatter_offset_s16(output, vldrhq_u16(live_channel + j),
                                      vldrbq_s16(live + j));
        }
        if (j < live_count) {
            const mve_pred16_t q = vctp16q((uint32_t)(live_count - j));
            vstrbq_scatter_offset_p_s16(output, vldrhq_z_u16(live_channel + j, q),
                                        vldrbq_z_s16(live + j, q), q);
        }
        live += live_count;
        output += channels;
    }
#else
    for (int32_t p = 0; p < pixels; p++) {
        memcpy(output, pixel, (size_t)channels);
        for (int32_t j = 0; j < live_count; j++) {
            output[live_channel[j]] = live[j];
        }
        live += live_count;
        output += channels;
    }
#endif
    return TH_OK;
}
