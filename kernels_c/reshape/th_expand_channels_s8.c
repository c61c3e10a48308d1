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

th_status th_expand_channels_s8(const th_context *ctx, const int8_t *live, int32_t pixels,
                                int32_t live_count, const uint16_t *live_channel,
                                const int8_t *pixel, int32_t channels, int8_t *output)
{
    (void)ctx;
    if (live == NULL || pixel == NULL || output == NULL || pixels < 0 || live_count < 0 ||
        channels <= 0 || live_count > channels || (live_count > 0 && live_channel == NULL)) {
        return TH_ERR_ARG;
    }
    for (int32_t p = 0; p < pixels; p++) {
        memcpy(output, pixel, (size_t)channels);
        for (int32_t j = 0; j < live_count; j++) {
            output[live_channel[j]] = live[j];
        }
        live += live_count;
        output += channels;
    }
    return TH_OK;
}
