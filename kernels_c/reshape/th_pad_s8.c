/* th_pad_s8: PAD / PADV2 for int8 (raw fill value). The output is written once, in
 * order: runs of fill with memset, runs of input with memcpy (th_nn_fill / th_nn_move:
 * Helium loops on MVE builds). Dims after the innermost padded one are copied as one
 * block. */
#include <stddef.h>
#include <string.h>

#include "th_nn.h"
#include "th_nn_shape.h"

typedef struct {
    const th_pad_params *p;
    const th_shape *in;
    int32_t last;  /* innermost dim with padding; dims after it are one block */
    int32_t block; /* input elements per index of dim `last` ... */
    int32_t out_stride[TH_MAX_RANK]; /* output elements per index of dim d */
    int32_t in_stride[TH_MAX_RANK];
} pad_walk;

/* Writes the output part of dim d at out from the input part at in. */
static void pad_dim(const pad_walk *w, int32_t d, const int8_t *in, int8_t *out)
{
    const int8_t fill = (int8_t)w->p->pad_value;
    const int32_t os = w->out_stride[d];
    th_nn_fill(out, fill, (size_t)w->p->before[d] * (size_t)os);
    out += w->p->before[d] * os;
    if (d == w->last) {
        th_nn_move(out, in, (size_t)w->in->dims[d] * (size_t)w->block);
        out += w->in->dims[d] * w->block;
    } else {
        for (int32_t i = 0; i < w->in->dims[d]; i++) {
            pad_dim(w, d + 1, in + i * w->in_stride[d], out);
            out += os;
        }
    }
    th_nn_fill(out, fill, (size_t)w->p->after[d] * (size_t)os);
}

th_status th_pad_s8(const th_context *ctx, const th_pad_params *params,
                    const th_shape *input_shape, const int8_t *input,
                    const th_shape *output_shape, int8_t *output)
{
    (void)ctx;
    if (params == NULL || input == NULL || output == NULL) {
        return TH_ERR_ARG;
    }
    const int32_t in_count = th_nn_shape_count(input_shape);
    const int32_t out_count = th_nn_shape_count(output_shape);
    if (in_count < 0 || out_count < 0 || input_shape->rank != output_shape->rank ||
        params->pad_value < -128 || params->pad_value > 127) {
        return TH_ERR_ARG;
    }
    const int32_t rank = input_shape->rank;
    pad_walk w;
    w.p = params;
    w.in = input_shape;
    w.last = 0;
    for (int32_t d = 0; d < rank; d++) {
        if (params->before[d] < 0 || params->after[d] < 0 ||
            (int64_t)input_shape->dims[d] + params->before[d] + params->after[d] !=
                output_shape->dims[d]) {
            return TH_ERR_ARG;
        }
        if (params->before[d] > 0 || params->after[d] > 0) {
            w.last = d;
        }
    }
    th_nn_shape_strides(output_shape, w.out_stride);
    th_nn_shape_strides(input_shape, w.in_stride);
    w.block = w.in_stride[w.last];
    pad_dim(&w, 0, input, output);
    return TH_OK;
}
