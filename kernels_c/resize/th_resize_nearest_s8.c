/* th_resize_nearest_s8: RESIZE_NEAREST_NEIGHBOR (NHWC int8) from host-built source indices
 * (tables->rows: one per output row, tables->cols: one per output column; TFLM's float
 * arithmetic stays on the host). Each output pixel is one run of C bytes; an output row
 * whose source row equals the previous one's is one memcpy of the previous output row. */
#include <string.h>

#include "th_nn_resize.h"

th_status th_resize_nearest_s8(const th_context *ctx, const th_resize_tables *tables,
                               const th_dims *input_dims, const int8_t *input,
                               const th_dims *output_dims, int8_t *output)
{
    (void)ctx;
    if (tables == NULL || input == NULL || output == NULL ||
        !th_nn_resize_dims_ok(input_dims, output_dims) ||
        !th_nn_resize_table_ok(tables->rows, output_dims->h, 1, input_dims->h) ||
        !th_nn_resize_table_ok(tables->cols, output_dims->w, 1, input_dims->w)) {
        return TH_ERR_ARG;
    }
    const size_t c = (size_t)input_dims->c;
    const size_t in_row = (size_t)input_dims->w * c, out_row = (size_t)output_dims->w * c;
    int8_t *out = output;
    for (int32_t n = 0; n < input_dims->n; n++) {
        const int8_t *image = input + (size_t)n * (size_t)input_dims->h * in_row;
        for (int32_t y = 0; y < output_dims->h; y++) {
            if (y > 0 && tables->rows[y] == tables->rows[y - 1]) {
                memcpy(out, out - out_row, out_row);
                out += out_row;
                continue;
            }
            const int8_t *src = image + (size_t)tables->rows[y] * in_row;
            if (c == 1) {
                for (int32_t x = 0; x < output_dims->w; x++) {
                    out[x] = src[tables->cols[x]];
                }
                out += out_row;
                continue;
            }
            for (int32_t x = 0; x < output_dims->w; x++) {
                th_nn_copy_run(out, src + (size_t)tables->cols[x] * c, c);
                out += c;
            }
        }
    }
    return TH_OK;
}
