/* th_kcase_movement.c - data-movement and MAXIMUM / MINIMUM kernel cases (see the header). */
#include "th_kcase_movement.h"

#include <string.h>

#include "th_nn.h"

enum {
    OP_PAD = 100,
    OP_CONCAT = 101,
    OP_SPLIT = 102,
    OP_TRANSPOSE = 103,
    OP_STRIDED_SLICE = 104,
    OP_MAXIMUM = 105,
    OP_MINIMUM = 106,
    OP_GATHER = 107,
    OP_DEPTH_TO_SPACE = 108,
    OP_SPACE_TO_DEPTH = 109,
    OP_PRELU = 110,
    OP_SQUARED_DIFFERENCE = 111,
    OP_EXPAND_CHANNELS = 112
};

#define FLAG_IN_PLACE 1
#define MAX_PARTS 7

typedef struct {
    const int32_t *v;
    uint32_t n;
    uint32_t pos;
    int ok;
} ints_reader;

static int32_t next_int(ints_reader *r)
{
    if (r->pos >= r->n) {
        r->ok = 0;
        return 0;
    }
    return r->v[r->pos++];
}

/* rank, then rank dims */
static th_shape next_shape(ints_reader *r)
{
    th_shape s;
    memset(&s, 0, sizeof s);
    s.rank = next_int(r);
    if (s.rank < 1 || s.rank > TH_MAX_RANK) {
        r->ok = 0;
        s.rank = 1;
        return s;
    }
    for (int32_t i = 0; i < s.rank; i++) {
        s.dims[i] = next_int(r);
    }
    return s;
}

static int64_t count_of(const th_shape *s)
{
    int64_t n = 1;
    for (int32_t i = 0; i < s->rank; i++) {
        n *= s->dims[i];
    }
    return n;
}

/* A copy of blob i in fresh memory, or NULL. */
static int8_t *blob_copy(const th_kalloc *mem, const uint8_t *const *blob,
                         const uint32_t *blob_len, uint32_t i, size_t room)
{
    void *p = mem->alloc(mem->self, room > blob_len[i] ? room : blob_len[i]);
    if (p != NULL) {
        memcpy(p, blob[i], blob_len[i]);
    }
    return p;
}

/* A copy of blob 0 and an output buffer of out_len bytes; 0 if they do not fit. */
static int in_out(const th_kalloc *mem, const uint8_t *const *blob, const uint32_t *blob_len,
                  int64_t out_len, int8_t **input, int8_t **output)
{
    *input = blob_copy(mem, blob, blob_len, 0, 0);
    *output = mem->alloc(mem->self, out_len > 0 ? (size_t)out_len : 1u);
    return *input != NULL && *output != NULL;
}

int th_kcase_run_movement(uint32_t op, const int32_t *ints, uint32_t n_ints,
                          const uint8_t *const *blob, const uint32_t *blob_len,
                          uint32_t n_blobs, const th_kalloc *mem, int32_t *status,
                          const int8_t **out, int64_t *out_len)
{
    if (op < OP_PAD || op > OP_EXPAND_CHANNELS) {
        return 0;
    }
    *status = TH_KCASE_BAD_RECORD;
    *out = NULL;
    *out_len = 0;
    ints_reader r = {ints, n_ints, 0, 1};
    const int32_t flags = next_int(&r);
    const th_context ctx = {NULL, 0};
    th_shape shapes[MAX_PARTS];
    const int8_t *parts[MAX_PARTS];
    int8_t *outs[MAX_PARTS];
    th_shape in_shape;
    th_shape out_shape;
    int8_t *input = NULL;
    int8_t *output = NULL;
    int32_t st = TH_KCASE_BAD_RECORD;
    if (n_blobs < 1) {
        return 1;
    }
    switch (op) {
    case OP_PAD: { /* in shape, before[rank], after[rank], pad value; blob input */
        th_pad_params p;
        memset(&p, 0, sizeof p);
        in_shape = next_shape(&r);
        out_shape = in_shape;
        for (int32_t d = 0; d < in_shape.rank; d++) {
            p.before[d] = next_int(&r);
        }
        for (int32_t d = 0; d < in_shape.rank; d++) {
            p.after[d] = next_int(&r);
            out_shape.dims[d] += p.before[d] + p.after[d];
        }
        p.pad_value = next_int(&r);
        if (!r.ok || count_of(&in_shape) != blob_len[0]) {
            return 1;
        }
        *out_len = count_of(&out_shape);
        if (!in_out(mem, blob, blob_len, *out_len, &input, &output)) {
            *status = TH_KCASE_NO_MEMORY;
            return 1;
        }
        th_kcase_before_kernel();
        st = th_pad_s8(&ctx, &p, &in_shape, input, &out_shape, output);
        th_kcase_after_kernel();
        break;
    }
    case OP_CONCAT:
    case OP_SPLIT: { /* axis, whole shape, n, then n part shapes; blobs: the inputs */
        const int32_t axis = next_int(&r);
        const th_shape whole = next_shape(&r);
        const int32_t n = next_int(&r);
        if (n < 1 || n > MAX_PARTS) {
            return 1;
        }
        for (int32_t i = 0; i < n; i++) {
            shapes[i] = next_shape(&r);
        }
        if (!r.ok || n_blobs != (op == OP_CONCAT ? (uint32_t)n : 1u)) {
            return 1;
        }
        *out_len = count_of(&whole);
        if (op == OP_CONCAT) {
            th_concat_params p = {axis, n};
            for (int32_t i = 0; i < n; i++) {
                if (count_of(&shapes[i]) != blob_len[i]) {
                    return 1;
                }
                parts[i] = blob_copy(mem, blob, blob_len, (uint32_t)i, 0);
                if (parts[i] == NULL) {
                    *status = TH_KCASE_NO_MEMORY;
                    return 1;
                }
            }
            output = mem->alloc(mem->self, (size_t)*out_len);
            if (output == NULL) {
                *status = TH_KCASE_NO_MEMORY;
                return 1;
            }
            th_kcase_before_kernel();
            st = th_concat_s8(&ctx, &p, shapes, parts, &whole, output);
            th_kcase_after_kernel();
        } else { /* the outputs back to back in one buffer, in order */
            th_split_params p = {axis, n};
            if (count_of(&whole) != blob_len[0]) {
                return 1;
            }
            input = blob_copy(mem, blob, blob_len, 0, 0);
            output = mem->alloc(mem->self, (size_t)*out_len);
            if (input == NULL || output == NULL) {
                *status = TH_KCASE_NO_MEMORY;
                return 1;
            }
            int8_t *at = output;
            for (int32_t i = 0; i < n; i++) {
                outs[i] = at;
                at += count_of(&shapes[i]);
            }
            th_kcase_before_kernel();
            st = th_split_s8(&ctx, &p, &whole, input, shapes, outs);
            th_kcase_after_kernel();
        }
        break;
    }
    case OP_TRANSPOSE:
    case OP_STRIDED_SLICE: { /* in shape, out shape, then perm or begin and stride */
        in_shape = next_shape(&r);
        out_shape = next_shape(&r);
        th_transpose_params tp;
        th_strided_slice_params sp;
        memset(&tp, 0, sizeof tp);
        memset(&sp, 0, sizeof sp);
        for (int32_t d = 0; d < in_shape.rank; d++) {
            if (op == OP_TRANSPOSE) {
                tp.perm[d] = next_int(&r);
            } else {
                sp.begin[d] = next_int(&r);
            }
        }
        for (int32_t d = 0; op == OP_STRIDED_SLICE && d < in_shape.rank; d++) {
            sp.stride[d] = next_int(&r);
        }
        if (!r.ok || count_of(&in_shape) != blob_len[0]) {
            return 1;
        }
        *out_len = count_of(&out_shape);
        if (!in_out(mem, blob, blob_len, *out_len, &input, &output)) {
            *status = TH_KCASE_NO_MEMORY;
            return 1;
        }
        th_kcase_before_kernel();
        st = op == OP_TRANSPOSE
                 ? th_transpose_s8(&ctx, &tp, &in_shape, input, &out_shape, output)
                 : th_strided_slice_s8(&ctx, &sp, &in_shape, input, &out_shape, output);
        th_kcase_after_kernel();
        break;
    }
    case OP_MAXIMUM:
    case OP_MINIMUM:
    case OP_PRELU:
    case OP_SQUARED_DIFFERENCE: { /* shape1, shape2, out shape (+ params); blobs a, b; in
                                   * place: out over a */
        const th_shape s1 = next_shape(&r);
        const th_shape s2 = next_shape(&r);
        out_shape = next_shape(&r);
        th_prelu_params pp;
        memset(&pp, 0, sizeof pp);
        if (op == OP_PRELU) {
            pp.input_offset = next_int(&r);
            pp.alpha_offset = next_int(&r);
            pp.output_offset = next_int(&r);
            pp.multiplier_pos = next_int(&r);
            pp.shift_pos = next_int(&r);
            pp.multiplier_neg = next_int(&r);
            pp.shift_neg = next_int(&r);
        }
        th_add_params ap;
        th_add_quant aq;
        memset(&ap, 0, sizeof ap);
        memset(&aq, 0, sizeof aq);
        if (op == OP_SQUARED_DIFFERENCE) { /* arith.binary.SquaredDifferenceParams' order */
            ap.input1_offset = next_int(&r);
            ap.input2_offset = next_int(&r);
            ap.output_offset = next_int(&r);
            ap.left_shift = next_int(&r);
            aq.input1_multiplier = next_int(&r);
            aq.input1_shift = next_int(&r);
            aq.input2_multiplier = next_int(&r);
            aq.input2_shift = next_int(&r);
            aq.output_multiplier = next_int(&r);
            aq.output_shift = next_int(&r);
            ap.activation.min = next_int(&r);
            ap.activation.max = next_int(&r);
        }
        if (!r.ok || n_blobs != 2 || count_of(&s1) != blob_len[0] ||
            count_of(&s2) != blob_len[1]) {
            return 1;
        }
        *out_len = count_of(&out_shape);
        const int in_place = (flags & FLAG_IN_PLACE) != 0;
        input = blob_copy(mem, blob, blob_len, 0, in_place ? (size_t)*out_len : 0);
        const int8_t *b = blob_copy(mem, blob, blob_len, 1, 0);
        output = in_place ? input : mem->alloc(mem->self, (size_t)*out_len);
        if (input == NULL || b == NULL || output == NULL) {
            *status = TH_KCASE_NO_MEMORY;
            return 1;
        }
        th_kcase_before_kernel();
        st = op == OP_MAXIMUM ? th_maximum_s8(&ctx, &s1, input, &s2, b, &out_shape, output)
             : op == OP_MINIMUM ? th_minimum_s8(&ctx, &s1, input, &s2, b, &out_shape, output)
             : op == OP_PRELU   ? th_prelu_s8(&ctx, &pp, &s1, input, &s2, b, &out_shape, output)
                                : th_squared_difference_s8(&ctx, &ap, &aq, &s1, input, &s2, b,
                                                           &out_shape, output);
        th_kcase_after_kernel();
        break;
    }
    case OP_GATHER: { /* batch, outer, axis size, inner, coords; blobs input, indices */
        th_gather_params p;
        p.batch = next_int(&r);
        p.outer = next_int(&r);
        p.axis_size = next_int(&r);
        p.inner = next_int(&r);
        p.coords = next_int(&r);
        if (!r.ok || n_blobs != 2 ||
            (int64_t)p.batch * p.outer * p.axis_size * p.inner != blob_len[0] ||
            (int64_t)p.batch * p.coords * 4 != blob_len[1]) {
            return 1;
        }
        *out_len = (int64_t)p.batch * p.outer * p.coords * p.inner;
        input = blob_copy(mem, blob, blob_len, 0, 0);
        const int8_t *idx = blob_copy(mem, blob, blob_len, 1, 0);
        output = mem->alloc(mem->self, *out_len > 0 ? (size_t)*out_len : 1u);
        if (input == NULL || idx == NULL || output == NULL) {
            *status = TH_KCASE_NO_MEMORY;
            return 1;
        }
        th_kcase_before_kernel();
        st = th_gather_s8(&ctx, &p, input, (const int32_t *)(const void *)idx, output);
        th_kcase_after_kernel();
        break;
    }
    case OP_EXPAND_CHANNELS: { /* pixels, live count, channels; blobs live, pixel,
                                * live_channel (uint16) */
        const int32_t pixels = next_int(&r), live_count = next_int(&r), channels = next_int(&r);
        if (!r.ok || n_blobs != 3 || (int64_t)pixels * live_count != blob_len[0] ||
            channels != (int64_t)blob_len[1] || (int64_t)live_count * 2 != blob_len[2]) {
            return 1;
        }
        *out_len = (int64_t)pixels * channels;
        const int8_t *px = blob_copy(mem, blob, blob_len, 1, 0);
        const int8_t *ch = blob_copy(mem, blob, blob_len, 2, 0);
        if (!in_out(mem, blob, blob_len, *out_len, &input, &output) || px == NULL ||
            (live_count > 0 && ch == NULL)) {
            *status = TH_KCASE_NO_MEMORY;
            return 1;
        }
        th_kcase_before_kernel();
        st = th_expand_channels_s8(&ctx, input, pixels, live_count,
                                   (const uint16_t *)(const void *)ch, px, channels, output);
        th_kcase_after_kernel();
        break;
    }
    default: { /* DEPTH_TO_SPACE / SPACE_TO_DEPTH: block, in dims (4), out dims (4) */
        const int32_t block = next_int(&r);
        in_shape = next_shape(&r);
        out_shape = next_shape(&r);
        if (!r.ok || in_shape.rank != 4 || out_shape.rank != 4 ||
            count_of(&in_shape) != blob_len[0]) {
            return 1;
        }
        const th_dims di = {in_shape.dims[0], in_shape.dims[1], in_shape.dims[2],
                            in_shape.dims[3]};
        const th_dims dout = {out_shape.dims[0], out_shape.dims[1], out_shape.dims[2],
                              out_shape.dims[3]};
        *out_len = count_of(&out_shape);
        if (!in_out(mem, blob, blob_len, *out_len, &input, &output)) {
            *status = TH_KCASE_NO_MEMORY;
            return 1;
        }
        th_kcase_before_kernel();
        st = op == OP_DEPTH_TO_SPACE
                 ? th_depth_to_space_s8(&ctx, block, &di, input, &dout, output)
                 : th_space_to_depth_s8(&ctx, block, &di, input, &dout, output);
        th_kcase_after_kernel();
        break;
    }
    }
    *status = st;
    *out = output;
    return 1;
}
