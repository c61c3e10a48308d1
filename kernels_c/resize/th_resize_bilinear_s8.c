/* th_resize_bilinear_s8: RESIZE_BILINEAR (NHWC int8) as TFLM's ResizeBilinearInteger, from
 * host-built tables (tinyhost.arith.resize): per output row (lower row, upper row, upper
 * weight wy) and per output column (left, right, right weight wx), weights in 1/1024. Each
 * output value is the raw sum v_ll*(1024-wy)*(1024-wx) + v_ul*wy*(1024-wx) +
 * v_lr*(1024-wy)*wx + v_ur*wy*wx, plus 2^19 (minus, when the sum is not positive), divided
 * by 2^20 truncating toward zero. With weights in [-1024, 2048] (checked) the sum fits int32:
 * |sum| <= 128 * 3072^2 + 2^19 < 2^31. DSP builds compute two channels at a time separably
 * with SMLAD (same integers). */
#include <string.h>

#include "th_nn_resize.h"
#include "th_nn_support.h"

/* TFLM's rounding of the sum (units of 2^-20): (s + 2^19) / 2^20 for s > 0, (s - 2^19) / 2^20
 * otherwise, C division. As one arithmetic shift (floor): the second is
 * ceil((s - 2^19) / 2^20) = floor((s + 2^19 - 1) / 2^20). */
static inline int8_t round20(int32_t s)
{
    return (int8_t)((s + (1 << 19) - 1 + (s > 0)) >> 20);
}

#if TH_NN_HAS_DSP
static inline uint32_t read_u16(const int8_t *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof v);
    return v;
}
#endif

th_status th_resize_bilinear_s8(const th_context *ctx, const th_resize_tables *tables,
                                const th_dims *input_dims, const int8_t *input,
                                const th_dims *output_dims, int8_t *output)
{
    (void)ctx;
    if (tables == NULL || input == NULL || output == NULL ||
        !th_nn_resize_dims_ok(input_dims, output_dims) ||
        !th_nn_resize_table_ok(tables->rows, output_dims->h, 3, input_dims->h) ||
        !th_nn_resize_table_ok(tables->cols, output_dims->w, 3, input_dims->w)) {
        return TH_ERR_ARG;
    }
    const int32_t one = 1 << 10;
    const int32_t c = input_dims->c;
    const size_t in_row = (size_t)input_dims->w * (size_t)c;
    int8_t *out = output;
    for (int32_t n = 0; n < input_dims->n; n++) {
        const int8_t *image = input + (size_t)n * (size_t)input_dims->h * in_row;
        for (int32_t y = 0; y < output_dims->h; y++) {
            const int32_t *ry = tables->rows + 3 * y;
            const int8_t *lo = image + (size_t)ry[0] * in_row;
            const int8_t *hi = image + (size_t)ry[1] * in_row;
            const int32_t wy = ry[2];
            for (int32_t x = 0; x < output_dims->w; x++) {
                const int32_t *rx = tables->cols + 3 * x;
                const int32_t wx = rx[2];
                const int32_t w_ll = (one - wy) * (one - wx), w_ul = wy * (one - wx);
                const int32_t w_lr = (one - wy) * wx, w_ur = wy * wx;
                const size_t left = (size_t)rx[0] * (size_t)c, right = (size_t)rx[1] * (size_t)c;
                const int8_t *ll = lo + left, *ul = hi + left, *lr = lo + right, *ur = hi + right;
                int32_t k = 0;
#if TH_NN_HAS_DSP
                /* two channels at a time, separably: h = (1024 - wx) * left + wx * right per
                 * row by SMLAD on (left, right) byte pairs, then (1024 - wy) * h_lo + wy * h_hi:
                 * the same integer as the four products (|h| <= 128 * 3072) */
                const int32_t wpair = th_pkhbt(one - wx, wx);
                for (; k + 2 <= c; k += 2) {
                    const int32_t l = (int32_t)(read_u16(ll + k) | (read_u16(lr + k) << 16));
                    const int32_t u = (int32_t)(read_u16(ul + k) | (read_u16(ur + k) << 16));
                    const int32_t l0 = th_smlad(th_sxtb16(l), wpair, 0);
                    const int32_t l1 = th_smlad(th_sxtb16_ror8(l), wpair, 0);
                    const int32_t u0 = th_smlad(th_sxtb16(u), wpair, 0);
                    const int32_t u1 = th_smlad(th_sxtb16_ror8(u), wpair, 0);
                    out[k] = round20((one - wy) * l0 + wy * u0);
                    out[k + 1] = round20((one - wy) * l1 + wy * u1);
                }
#endif
                for (; k < c; k++) {
                    out[k] = round20(ll[k] * w_ll + ul[k] * w_ul + lr[k] * w_lr + ur[k] * w_ur);
                }
                out += c;
            }
        }
    }
    return TH_OK;
}
