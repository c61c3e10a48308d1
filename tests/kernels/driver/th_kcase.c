/* th_kcase.c - decode a kernel test case, run the kernel, encode the result. */
#include "th_kcase.h"
#include "th_kcase_movement.h"

#include <stddef.h>
#include <string.h>

#include "th_nn.h"

enum {
    OP_CONV = 1,
    OP_CONV_1X1 = 2,
    OP_CONV_3X3 = 3,
    OP_CONV_GENERAL = 4,
    OP_DW = 10,
    OP_DW_3X3 = 11,
    OP_DW_GENERAL = 12,
    OP_FC = 20,
    OP_FC_PER_CHANNEL = 21,
    OP_FC_W16 = 22,
    OP_AVGPOOL = 30,
    OP_MAXPOOL = 31,
    OP_MUL = 40,
    OP_MEAN = 50,
    OP_ADD = 41,
    OP_SUB = 42,
    OP_ADD16 = 43,
    OP_SUB16 = 44,
    OP_LUT = 60,
    OP_SOFTMAX = 61,
    OP_SOFTMAX16 = 62,
    OP_BUILD_FLAGS = 90
};

#define FLAG_IN_PLACE 1
#define FLAG_FAST_SCRATCH 2 /* dw, conv, maxpool, fc: the kernel's *_scratch_size_fast scratch */
#define FLAG_NO_SCRATCH 4   /* pools: no scratch given (the direct paths) */
#define FLAG_TABLES 8       /* add/sub: the host's input tables (th_add_s8_tables) */
#define FLAG_PREPARED 16    /* add/sub/mul/maxpool: the host prepared struct, checked, run */
#define MAX_INTS 64
#define MAX_BLOBS 8

typedef struct {
    uint32_t case_id;
    uint32_t op;
    uint32_t n_ints;
    int32_t ints[MAX_INTS];
    uint32_t n_blobs;
    const uint8_t *blob[MAX_BLOBS];
    uint32_t blob_len[MAX_BLOBS];
} decoded_case;

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

static void wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static int decode(const uint8_t *rec, size_t len, decoded_case *dc)
{
    size_t pos = 0;
    if (len < 24 || rd32(rec) != TH_KCASE_MAGIC || rd32(rec + 4) != len) {
        return 0;
    }
    dc->case_id = rd32(rec + 8);
    dc->op = rd32(rec + 12);
    dc->n_ints = rd32(rec + 16);
    pos = 20;
    if (dc->n_ints > MAX_INTS || pos + 4u * dc->n_ints + 4u > len) {
        return 0;
    }
    for (uint32_t i = 0; i < dc->n_ints; i++, pos += 4) {
        dc->ints[i] = (int32_t)rd32(rec + pos);
    }
    dc->n_blobs = rd32(rec + pos);
    pos += 4;
    if (dc->n_blobs > MAX_BLOBS) {
        return 0;
    }
    for (uint32_t i = 0; i < dc->n_blobs; i++) {
        if (pos + 4 > len) {
            return 0;
        }
        const uint32_t n = rd32(rec + pos);
        pos += 4;
        const size_t padded = ((size_t)n + 3u) & ~(size_t)3u;
        if (padded > len - pos) {
            return 0;
        }
        dc->blob[i] = rec + pos;
        dc->blob_len[i] = n;
        pos += padded;
    }
    return pos == len;
}

/* Copies a blob into fresh memory (exact size) so the kernel sees a real, aligned array. */
static void *copy_blob(const th_kalloc *mem, const decoded_case *dc, uint32_t i)
{
    if (i >= dc->n_blobs || dc->blob_len[i] == 0) {
        return NULL;
    }
    void *p = mem->alloc(mem->self, dc->blob_len[i]);
    if (p != NULL) {
        memcpy(p, dc->blob[i], dc->blob_len[i]);
    }
    return p;
}

static th_dims dims_at(const int32_t *v)
{
    th_dims d;
    d.n = v[0];
    d.h = v[1];
    d.w = v[2];
    d.c = v[3];
    return d;
}

static int64_t dims_count(const th_dims *d)
{
    return (int64_t)d->n * d->h * d->w * d->c;
}

/* Shared state of one run: where the output lands and how long it is. */
typedef struct {
    int32_t status;
    const int8_t *out;
    int64_t out_len;
} run_result;

/* conv / dw ints: flags, in(4), filter(4), out(4), input_offset, output_offset,
 * stride(2), padding(2), dilation(2), act(2), ch_mult (dw only)
 * blobs: input, filter, bias (empty = none), multiplier (int32), shift (int32) */
static run_result run_conv_like(const decoded_case *dc, const th_kalloc *mem)
{
    run_result rr = {TH_KCASE_BAD_RECORD, NULL, 0};
    const int is_dw = dc->op >= OP_DW && dc->op <= OP_DW_GENERAL;
    if (dc->n_ints < (is_dw ? 24u : 23u) || dc->n_blobs != 5) {
        return rr;
    }
    const int32_t *v = dc->ints;
    const int32_t flags = v[0];
    const th_dims in_dims = dims_at(v + 1);
    const th_dims f_dims = dims_at(v + 5);
    const th_dims out_dims = dims_at(v + 9);
    const int64_t in_len = dims_count(&in_dims);
    const int64_t out_len = dims_count(&out_dims);
    if (in_len <= 0 || out_len <= 0 || in_len != (int64_t)dc->blob_len[0] ||
        dc->blob_len[3] != 4u * (uint32_t)out_dims.c || dc->blob_len[4] != dc->blob_len[3] ||
        (dc->blob_len[2] != 0 && dc->blob_len[2] != dc->blob_len[3])) {
        return rr;
    }
    const int8_t *filter = copy_blob(mem, dc, 1);
    const int32_t *bias = copy_blob(mem, dc, 2);
    const int32_t *mult = copy_blob(mem, dc, 3);
    const int32_t *shift = copy_blob(mem, dc, 4);
    int8_t *input;
    int8_t *output;
    if (flags & FLAG_IN_PLACE) {
        const int64_t n = in_len > out_len ? in_len : out_len;
        input = mem->alloc(mem->self, (size_t)n);
        output = input;
    } else {
        input = mem->alloc(mem->self, (size_t)in_len);
        output = mem->alloc(mem->self, (size_t)out_len);
    }
    if (filter == NULL || mult == NULL || shift == NULL || input == NULL || output == NULL ||
        (dc->blob_len[2] != 0 && bias == NULL)) {
        rr.status = TH_KCASE_NO_MEMORY;
        return rr;
    }
    memcpy(input, dc->blob[0], (size_t)in_len);
    const th_per_channel_quant quant = {mult, shift};
    int32_t scratch_size;
    th_context ctx = {NULL, 0};
    if (is_dw) {
        th_dw_conv_params p;
        p.input_offset = v[13];
        p.output_offset = v[14];
        p.stride.h = v[15];
        p.stride.w = v[16];
        p.padding.h = v[17];
        p.padding.w = v[18];
        p.dilation.h = v[19];
        p.dilation.w = v[20];
        p.activation.min = v[21];
        p.activation.max = v[22];
        p.ch_mult = v[23];
        scratch_size = dc->op == OP_DW_3X3
                           ? th_dw_conv_3x3_s8_scratch_size(&p, &in_dims, &f_dims, &out_dims)
                       : dc->op == OP_DW_GENERAL
                           ? th_dw_conv_general_s8_scratch_size(&p, &in_dims, &f_dims, &out_dims)
                           : th_dw_conv_s8_scratch_size(&p, &in_dims, &f_dims, &out_dims);
        if (flags & FLAG_FAST_SCRATCH) {
            const int32_t fast =
                dc->op == OP_DW_3X3
                    ? th_dw_conv_3x3_s8_scratch_size_fast(&p, &in_dims, &f_dims, &out_dims)
                : dc->op == OP_DW_GENERAL
                    ? th_dw_conv_general_s8_scratch_size_fast(&p, &in_dims, &f_dims, &out_dims)
                    : th_dw_conv_s8_scratch_size_fast(&p, &in_dims, &f_dims, &out_dims);
            scratch_size = fast > scratch_size ? fast : scratch_size;
        }
        if (scratch_size > 0) {
            ctx.buf = mem->alloc(mem->self, (size_t)scratch_size);
            ctx.size = scratch_size;
            if (ctx.buf == NULL) {
                rr.status = TH_KCASE_NO_MEMORY;
                return rr;
            }
        }
        th_kcase_before_kernel();
        if (dc->op == OP_DW_3X3) {
            rr.status = th_dw_conv_3x3_s8(&ctx, &p, &quant, &in_dims, input, &f_dims, filter,
                                          bias, &out_dims, output);
        } else if (dc->op == OP_DW_GENERAL) {
            rr.status = th_dw_conv_general_s8(&ctx, &p, &quant, &in_dims, input, &f_dims,
                                              filter, bias, &out_dims, output);
        } else {
            rr.status = th_dw_conv_s8(&ctx, &p, &quant, &in_dims, input, &f_dims, filter, bias,
                                      &out_dims, output);
        }
        th_kcase_after_kernel();
    } else {
        th_conv_params p;
        p.input_offset = v[13];
        p.output_offset = v[14];
        p.stride.h = v[15];
        p.stride.w = v[16];
        p.padding.h = v[17];
        p.padding.w = v[18];
        p.dilation.h = v[19];
        p.dilation.w = v[20];
        p.activation.min = v[21];
        p.activation.max = v[22];
        scratch_size =
            dc->op == OP_CONV_1X1 ? th_conv_1x1_s8_scratch_size(&p, &in_dims, &f_dims, &out_dims)
            : dc->op == OP_CONV_3X3
                ? th_conv_3x3_s8_scratch_size(&p, &in_dims, &f_dims, &out_dims)
            : dc->op == OP_CONV_GENERAL
                ? th_conv_general_s8_scratch_size(&p, &in_dims, &f_dims, &out_dims)
                : th_conv_s8_scratch_size(&p, &in_dims, &f_dims, &out_dims);
        if (flags & FLAG_FAST_SCRATCH) {
            const int32_t fast =
                dc->op == OP_CONV_1X1
                    ? th_conv_1x1_s8_scratch_size_fast(&p, &in_dims, &f_dims, &out_dims)
                : dc->op == OP_CONV ? th_conv_s8_scratch_size_fast(&p, &in_dims, &f_dims, &out_dims)
                                    : 0;
            scratch_size = fast > scratch_size ? fast : scratch_size;
        }
        if (scratch_size > 0) {
            ctx.buf = mem->alloc(mem->self, (size_t)scratch_size);
            ctx.size = scratch_size;
            if (ctx.buf == NULL) {
                rr.status = TH_KCASE_NO_MEMORY;
                return rr;
            }
        }
        th_kcase_before_kernel();
        if (dc->op == OP_CONV_1X1) {
            rr.status = th_conv_1x1_s8(&ctx, &p, &quant, &in_dims, input, &f_dims, filter, bias,
                                       &out_dims, output);
        } else if (dc->op == OP_CONV_3X3) {
            rr.status = th_conv_3x3_s8(&ctx, &p, &quant, &in_dims, input, &f_dims, filter, bias,
                                       &out_dims, output);
        } else if (dc->op == OP_CONV_GENERAL) {
            rr.status = th_conv_general_s8(&ctx, &p, &quant, &in_dims, input, &f_dims, filter,
                                           bias, &out_dims, output);
        } else {
            rr.status = th_conv_s8(&ctx, &p, &quant, &in_dims, input, &f_dims, filter, bias,
                                   &out_dims, output);
        }
        th_kcase_after_kernel();
    }
    rr.out = output;
    rr.out_len = out_len;
    return rr;
}

/* fc ints: flags, batches, cin, cout, input_offset, filter_offset, output_offset, act(2)
 * blobs: input, weights, bias (empty = none), multiplier, shift (1 or cout int32) */
static run_result run_fc(const decoded_case *dc, const th_kalloc *mem)
{
    run_result rr = {TH_KCASE_BAD_RECORD, NULL, 0};
    if (dc->n_ints < 9 || dc->n_blobs != 5) {
        return rr;
    }
    const int32_t *v = dc->ints;
    const th_dims in_dims = {v[1], 1, 1, v[2]};
    const th_dims f_dims = {v[3], 1, 1, v[2]};
    const th_dims out_dims = {v[1], 1, 1, v[3]};
    const int64_t in_len = dims_count(&in_dims);
    const int64_t out_len = dims_count(&out_dims);
    if (in_len <= 0 || out_len <= 0 || in_len != (int64_t)dc->blob_len[0] ||
        dc->blob_len[3] == 0 || dc->blob_len[4] != dc->blob_len[3]) {
        return rr;
    }
    const int8_t *input = copy_blob(mem, dc, 0);
    const int8_t *filter = copy_blob(mem, dc, 1);
    const int32_t *bias = copy_blob(mem, dc, 2);
    const int32_t *mult = copy_blob(mem, dc, 3);
    const int32_t *shift = copy_blob(mem, dc, 4);
    int8_t *output = mem->alloc(mem->self, (size_t)out_len);
    if (input == NULL || filter == NULL || mult == NULL || shift == NULL || output == NULL ||
        (dc->blob_len[2] != 0 && bias == NULL)) {
        rr.status = TH_KCASE_NO_MEMORY;
        return rr;
    }
    th_fc_params p;
    p.input_offset = v[4];
    p.filter_offset = v[5];
    p.output_offset = v[6];
    p.activation.min = v[7];
    p.activation.max = v[8];
    th_context ctx = {NULL, 0};
    if (v[0] & FLAG_FAST_SCRATCH) { /* the short-input path past 128 inputs */
        ctx.size = th_fully_connected_s8_scratch_size_fast(&p, &in_dims, &f_dims);
        ctx.buf = ctx.size > 0 ? mem->alloc(mem->self, (size_t)ctx.size) : NULL;
        if (ctx.size > 0 && ctx.buf == NULL) {
            rr.status = TH_KCASE_NO_MEMORY;
            return rr;
        }
    }
    th_kcase_before_kernel();
    if (dc->op == OP_FC) {
        const th_per_tensor_quant q = {mult[0], shift[0]};
        rr.status = th_fully_connected_s8(&ctx, &p, &q, &in_dims, input, &f_dims, filter, bias,
                                          &out_dims, output);
    } else {
        if (dc->blob_len[3] != 4u * (uint32_t)v[3]) {
            return rr;
        }
        const th_per_channel_quant q = {mult, shift};
        rr.status = th_fully_connected_per_channel_s8(&ctx, &p, &q, &in_dims, input, &f_dims,
                                                      filter, bias, &out_dims, output);
    }
    th_kcase_after_kernel();
    rr.out = output;
    rr.out_len = out_len;
    return rr;
}

/* fc_w16 ints: flags, batches, cin, cout, output_offset, act(2), mult_step, fast
 * blobs: input, int16 weights, bias int32[round_up4(cout)] (input offset folded in),
 * multiplier, shift (1 or cout int32), the row loop's table (empty: NULL): th_fc_s8_w16,
 * the compiled backend's FC. */
static run_result run_fc_w16(const decoded_case *dc, const th_kalloc *mem)
{
    run_result rr = {TH_KCASE_BAD_RECORD, NULL, 0};
    if (dc->n_ints < 9 || dc->n_blobs != 6) {
        return rr;
    }
    const int32_t *v = dc->ints;
    const int64_t in_len = (int64_t)v[1] * v[2];
    const int64_t out_len = (int64_t)v[1] * v[3];
    const int64_t padded = ((int64_t)v[3] + 3) / 4 * 4;
    if (v[1] <= 0 || v[2] <= 0 || v[3] <= 0 || in_len != (int64_t)dc->blob_len[0] ||
        (int64_t)dc->blob_len[1] != padded * (((int64_t)v[2] + 3) / 4 * 4) * 2 ||
        (int64_t)dc->blob_len[2] != padded * 4 || dc->blob_len[3] == 0 ||
        dc->blob_len[4] != dc->blob_len[3] ||
        dc->blob_len[3] != (v[7] != 0 ? 4u * (uint32_t)v[3] : 4u) ||
        (dc->blob_len[5] != 0 && (int64_t)dc->blob_len[5] != padded * 12)) {
        return rr;
    }
    const int8_t *input = copy_blob(mem, dc, 0);
    const int16_t *weights = copy_blob(mem, dc, 1);
    const int32_t *bias = copy_blob(mem, dc, 2);
    const int32_t *mult = copy_blob(mem, dc, 3);
    const int32_t *shift = copy_blob(mem, dc, 4);
    const int32_t *table = copy_blob(mem, dc, 5); /* NULL when empty */
    int8_t *output = mem->alloc(mem->self, (size_t)out_len);
    if (input == NULL || weights == NULL || bias == NULL || mult == NULL || shift == NULL ||
        output == NULL) {
        rr.status = TH_KCASE_NO_MEMORY;
        return rr;
    }
    const th_fc_w16_params p = {v[1], v[2], v[3], v[4], {v[5], v[6]}, v[7], v[8], table};
    th_kcase_before_kernel();
    rr.status = th_fc_s8_w16(&p, mult, shift, input, weights, bias, output);
    th_kcase_after_kernel();
    rr.out = output;
    rr.out_len = out_len;
    return rr;
}

/* Input and output buffers (the output over the input when in_place). */
static int io_buffers(const th_kalloc *mem, int in_place, int64_t in_len, int64_t out_len,
                      int8_t **input, int8_t **output)
{
    if (in_place) {
        *input = mem->alloc(mem->self, (size_t)(in_len > out_len ? in_len : out_len));
        *output = *input;
    } else {
        *input = mem->alloc(mem->self, (size_t)in_len);
        *output = mem->alloc(mem->self, (size_t)out_len);
    }
    return *input != NULL && *output != NULL;
}

/* pool ints: flags, in(4), out(4), stride(2), padding(2), filter(2), act(2)[, d][, scratch];
 * blobs: input and, with FLAG_PREPARED (max pool), the host's th_maxpool_prep for a call
 * given scratch bytes (the last int). In place: the output d bytes from the input in one
 * buffer (th_nn.h (c); d = 0 when not given). */
static run_result run_pool(const decoded_case *dc, const th_kalloc *mem)
{
    run_result rr = {TH_KCASE_BAD_RECORD, NULL, 0};
    const int prepared = dc->n_ints > 0 && (dc->ints[0] & FLAG_PREPARED);
    if (dc->n_ints < (prepared ? 18u : 17u) || dc->n_blobs != (prepared ? 2u : 1u) ||
        (prepared && (dc->op != OP_MAXPOOL || dc->blob_len[1] != sizeof(th_maxpool_prep)))) {
        return rr;
    }
    const int32_t *v = dc->ints;
    const th_dims in_dims = dims_at(v + 1);
    const th_dims out_dims = dims_at(v + 5);
    const int64_t in_len = dims_count(&in_dims);
    const int64_t out_len = dims_count(&out_dims);
    if (in_len <= 0 || out_len <= 0 || in_len != (int64_t)dc->blob_len[0]) {
        return rr;
    }
    th_pool_params p;
    p.stride.h = v[9];
    p.stride.w = v[10];
    p.padding.h = v[11];
    p.padding.w = v[12];
    p.filter.h = v[13];
    p.filter.w = v[14];
    p.activation.min = v[15];
    p.activation.max = v[16];
    int8_t *input;
    int8_t *output;
    const int64_t d = dc->n_ints > 17 && (v[0] & FLAG_IN_PLACE) ? v[17] : 0;
    const int64_t in_at = d < 0 ? -d : 0, out_at = d > 0 ? d : 0;
    const int64_t end = in_at + in_len > out_at + out_len ? in_at + in_len : out_at + out_len;
    if (!io_buffers(mem, v[0] & FLAG_IN_PLACE, end, out_len, &input, &output)) {
        rr.status = TH_KCASE_NO_MEMORY;
        return rr;
    }
    if (v[0] & FLAG_IN_PLACE) {
        output = input + out_at;
        input += in_at;
    }
    memcpy(input, dc->blob[0], (size_t)in_len);
    int32_t size = (v[0] & FLAG_NO_SCRATCH) ? 0
                   : dc->op == OP_AVGPOOL ? th_avgpool_s8_scratch_size(&p, &in_dims, &out_dims)
                                          : th_maxpool_s8_scratch_size(&p, &in_dims, &out_dims);
    if ((v[0] & FLAG_FAST_SCRATCH) && dc->op == OP_MAXPOOL) {
        const int32_t fast = th_maxpool_s8_scratch_size_fast(&p, &in_dims, &out_dims);
        size = fast > size ? fast : size;
    }
    if (prepared) {
        size = v[dc->n_ints - 1];
    }
    th_context ctx = {NULL, 0};
    if (size > 0) {
        ctx.buf = mem->alloc(mem->self, (size_t)size);
        ctx.size = size;
        if (ctx.buf == NULL) {
            rr.status = TH_KCASE_NO_MEMORY;
            return rr;
        }
    }
    if (prepared) {
        /* the host's struct (tinyhost.arith.pool.maxpool_prep) must equal the kernel's word
         * for word; then the prepared entry runs on the host's */
        th_maxpool_prep mine, host;
        memset(&mine, 0, sizeof mine);
        rr.status = th_maxpool_s8_prepare(&p, &in_dims, &out_dims, size, &mine);
        memcpy(&host, dc->blob[1], sizeof host);
        if (rr.status == TH_OK && memcmp(&mine, &host, sizeof mine) != 0) {
            rr.status = TH_KCASE_PREP_MISMATCH;
        }
        if (rr.status == TH_OK) {
            th_kcase_before_kernel();
            rr.status = th_maxpool_s8_prepared(&ctx, &host, input, output);
            th_kcase_after_kernel();
        }
        rr.out = output;
        rr.out_len = out_len;
        return rr;
    }
    th_kcase_before_kernel();
    rr.status = dc->op == OP_AVGPOOL
                    ? th_avgpool_s8(&ctx, &p, &in_dims, input, &out_dims, output)
                    : th_maxpool_s8(&ctx, &p, &in_dims, input, &out_dims, output);
    th_kcase_after_kernel();
    rr.out = output;
    rr.out_len = out_len;
    return rr;
}

static th_shape shape4_at(const int32_t *v)
{
    th_shape s;
    s.rank = 4;
    for (int32_t i = 0; i < 4; i++) {
        s.dims[i] = v[i];
    }
    return s;
}

/* mul ints: flags, shape1(4), shape2(4), out(4), in1_offset, in2_offset, out_offset,
 * multiplier, shift, act(2); blobs: input1, input2 and, with FLAG_PREPARED, the host's
 * th_mul_prep. In place: the output over input1. */
static run_result run_mul(const decoded_case *dc, const th_kalloc *mem)
{
    run_result rr = {TH_KCASE_BAD_RECORD, NULL, 0};
    const int prepared = dc->n_ints > 0 && (dc->ints[0] & FLAG_PREPARED);
    if (dc->n_ints < 20 || dc->n_blobs != (prepared ? 3u : 2u) ||
        (prepared && dc->blob_len[2] != sizeof(th_mul_prep))) {
        return rr;
    }
    const int32_t *v = dc->ints;
    const th_shape s1 = shape4_at(v + 1), s2 = shape4_at(v + 5), so = shape4_at(v + 9);
    const int64_t len1 = (int64_t)s1.dims[0] * s1.dims[1] * s1.dims[2] * s1.dims[3];
    const int64_t out_len = (int64_t)so.dims[0] * so.dims[1] * so.dims[2] * so.dims[3];
    if (len1 != (int64_t)dc->blob_len[0] || out_len <= 0) {
        return rr;
    }
    int8_t *in1;
    int8_t *output;
    const int8_t *in2 = copy_blob(mem, dc, 1);
    if (!io_buffers(mem, v[0] & FLAG_IN_PLACE, len1, out_len, &in1, &output) || in2 == NULL) {
        rr.status = TH_KCASE_NO_MEMORY;
        return rr;
    }
    memcpy(in1, dc->blob[0], (size_t)len1);
    th_mul_params p;
    p.input1_offset = v[13];
    p.input2_offset = v[14];
    p.output_offset = v[15];
    p.activation.min = v[18];
    p.activation.max = v[19];
    const th_per_tensor_quant q = {v[16], v[17]};
    const th_context ctx = {NULL, 0};
    if (prepared) {
        /* as run_add_sub: the host's th_mul_prep (all int32) must equal the kernel's up to
         * nosign; the line fields and the px and sc choices are the host's alone (the
         * kernel's are "not proven" / "not chosen", 0), so the host's run as they are (the
         * reference checks the outputs) */
        th_mul_prep mine, host;
        memset(&mine, 0, sizeof mine); /* the walk's entries past its rank are left as found */
        rr.status = th_mul_s8_prepare(&p, &q, &s1, &s2, &so, &mine);
        memcpy(&host, dc->blob[2], sizeof host);
        const size_t upto = offsetof(th_mul_prep, nosign) + sizeof(int32_t);
        int32_t rest = mine.line | mine.line_a | mine.line_t | mine.line_k | mine.px;
        for (size_t i = 0; i < sizeof mine.px_w / sizeof mine.px_w[0]; i++) {
            rest |= mine.px_w[i];
        }
        rest |= mine.sc;
        for (size_t i = 0; i < sizeof mine.sc_w / sizeof mine.sc_w[0]; i++) {
            rest |= mine.sc_w[i];
        }
        if (rr.status == TH_OK && (memcmp(&mine, &host, upto) != 0 || rest != 0)) {
            rr.status = TH_KCASE_PREP_MISMATCH;
        }
        if (rr.status == TH_OK) {
            th_kcase_before_kernel();
            rr.status = th_mul_s8_prepared(&host, in1, in2, output);
            th_kcase_after_kernel();
        }
        rr.out = output;
        rr.out_len = out_len;
        return rr;
    }
    th_kcase_before_kernel();
    rr.status = th_mul_s8(&ctx, &p, &q, &s1, in1, &s2, in2, &so, output);
    th_kcase_after_kernel();
    rr.out = output;
    rr.out_len = out_len;
    return rr;
}

/* mean ints: flags, in(4), axis_mask, input_zero_point, output_zero_point, multiplier,
 * shift, out(4); blob: input */
static run_result run_mean(const decoded_case *dc, const th_kalloc *mem)
{
    run_result rr = {TH_KCASE_BAD_RECORD, NULL, 0};
    if (dc->n_ints < 14 || dc->n_blobs != 1) {
        return rr;
    }
    const int32_t *v = dc->ints;
    const th_shape si = shape4_at(v + 1), so = shape4_at(v + 10);
    const int64_t out_len = (int64_t)so.dims[0] * so.dims[1] * so.dims[2] * so.dims[3];
    const int8_t *input = copy_blob(mem, dc, 0);
    int8_t *output = out_len > 0 ? mem->alloc(mem->self, (size_t)out_len) : NULL;
    if (input == NULL || output == NULL) {
        rr.status = TH_KCASE_NO_MEMORY;
        return rr;
    }
    th_mean_params p;
    p.axis_mask = (uint32_t)v[5];
    p.input_zero_point = v[6];
    p.output_zero_point = v[7];
    const th_per_tensor_quant q = {v[8], v[9]};
    const th_context ctx = {NULL, 0};
    th_kcase_before_kernel();
    rr.status = th_mean_s8(&ctx, &p, &q, &si, input, &so, output);
    th_kcase_after_kernel();
    rr.out = output;
    rr.out_len = out_len;
    return rr;
}

/* The params of an add/sub record (ints 13-24, below). */
static void add_params_at(const int32_t *v, th_add_params *p, th_add_quant *q)
{
    p->input1_offset = v[13];
    p->input2_offset = v[14];
    p->output_offset = v[15];
    p->left_shift = v[16];
    p->activation.min = v[23];
    p->activation.max = v[24];
    q->input1_multiplier = v[17];
    q->input1_shift = v[18];
    q->input2_multiplier = v[19];
    q->input2_shift = v[20];
    q->output_multiplier = v[21];
    q->output_shift = v[22];
}

/* add/sub ints: flags, shape1(4), shape2(4), out(4), in1_offset, in2_offset, out_offset,
 * left_shift, m1, s1, m2, s2, mo, so, act(2); blobs: input1, input2 and, with FLAG_TABLES,
 * the two int32 tables. In place: the output over input1. */
static run_result run_add_sub(const decoded_case *dc, const th_kalloc *mem)
{
    run_result rr = {TH_KCASE_BAD_RECORD, NULL, 0};
    const int tables = dc->n_ints > 0 && (dc->ints[0] & FLAG_TABLES);
    const int prepared = dc->n_ints > 0 && (dc->ints[0] & FLAG_PREPARED);
    /* the int32 run of th_add_prep, walk to nosign */
    const size_t prep_off = offsetof(th_add_prep, walk);
    const size_t prep_len = offsetof(th_add_prep, nosign) + sizeof(int32_t) - prep_off;
    /* prepared with the host's separable form (add_sep): one more blob, 512 table words and
     * sep_mode, after the struct's run, and optionally the host's go, go_n, go_rows (add_go) */
    const uint32_t base_blobs = (tables ? 4u : 2u) + (prepared ? 1u : 0u);
    const int sep = prepared && dc->n_blobs == base_blobs + 1u;
    const uint32_t prep_blob = base_blobs - 1u;
    if (dc->n_ints < 25 || (dc->n_blobs != base_blobs && !sep) ||
        (prepared && dc->blob_len[prep_blob] != prep_len) ||
        (sep && dc->blob_len[base_blobs] != 513u * sizeof(int32_t) &&
         dc->blob_len[base_blobs] != 516u * sizeof(int32_t))) {
        return rr;
    }
    const int32_t *v = dc->ints;
    const th_shape s1 = shape4_at(v + 1), s2 = shape4_at(v + 5), so = shape4_at(v + 9);
    const int64_t len1 = (int64_t)s1.dims[0] * s1.dims[1] * s1.dims[2] * s1.dims[3];
    const int64_t out_len = (int64_t)so.dims[0] * so.dims[1] * so.dims[2] * so.dims[3];
    if (len1 != (int64_t)dc->blob_len[0] || out_len <= 0 ||
        (tables && (dc->blob_len[2] != 1024u || dc->blob_len[3] != 1024u))) {
        return rr;
    }
    int8_t *in1;
    int8_t *output;
    const int8_t *in2 = copy_blob(mem, dc, 1);
    const int32_t *t1 = tables ? copy_blob(mem, dc, 2) : NULL;
    const int32_t *t2 = tables ? copy_blob(mem, dc, 3) : NULL;
    if (!io_buffers(mem, v[0] & FLAG_IN_PLACE, len1, out_len, &in1, &output) || in2 == NULL ||
        (tables && (t1 == NULL || t2 == NULL))) {
        rr.status = TH_KCASE_NO_MEMORY;
        return rr;
    }
    memcpy(in1, dc->blob[0], (size_t)len1);
    th_add_params p;
    th_add_quant q;
    add_params_at(v, &p, &q);
    const th_context ctx = {NULL, 0};
    if (prepared) {
        /* the host's struct (tinyhost.arith.elementwise.add_prep) must equal the kernel's
         * field for field; then the prepared entry runs on the host's */
        th_add_prep mine, host;
        memset(&mine, 0, sizeof mine); /* the walk's entries past its rank are left as found */
        memset(&host, 0, sizeof host);
        rr.status = th_add_s8_prepare(&p, &q, t1, t2, &s1, &s2, &so, dc->op == OP_SUB, &mine);
        memcpy((uint8_t *)&host + prep_off, dc->blob[prep_blob], prep_len);
        host.t1 = t1;
        host.t2 = t2;
        if (sep) { /* the kernel's prepare leaves it unproven (NULL); compared above */
            const int32_t *words = copy_blob(mem, dc, base_blobs);
            if (words == NULL) {
                rr.status = TH_KCASE_NO_MEMORY;
                return rr;
            }
            host.sep = words;
            host.sep_mode = words[512];
            if (dc->blob_len[base_blobs] == 516u * sizeof(int32_t)) {
                host.go = words[513];
                host.go_n = words[514];
                host.go_rows = words[515];
            }
        }
        if (rr.status == TH_OK &&
            memcmp((const uint8_t *)&mine + prep_off, (const uint8_t *)&host + prep_off,
                   prep_len) != 0) {
            rr.status = TH_KCASE_PREP_MISMATCH;
        }
        if (rr.status == TH_OK) {
            th_kcase_before_kernel();
            rr.status = th_add_s8_prepared(&host, in1, in2, output);
            th_kcase_after_kernel();
        }
        rr.out = output;
        rr.out_len = out_len;
        return rr;
    }
    th_kcase_before_kernel();
    if (dc->op == OP_ADD) {
        rr.status = tables ? th_add_s8_tables(&ctx, &p, &q, t1, t2, &s1, in1, &s2, in2, &so,
                                              output)
                           : th_add_s8(&ctx, &p, &q, &s1, in1, &s2, in2, &so, output);
    } else {
        rr.status = tables ? th_sub_s8_tables(&ctx, &p, &q, t1, t2, &s1, in1, &s2, in2, &so,
                                              output)
                           : th_sub_s8(&ctx, &p, &q, &s1, in1, &s2, in2, &so, output);
    }
    th_kcase_after_kernel();
    rr.out = output;
    rr.out_len = out_len;
    return rr;
}

/* add16/sub16 ints: as add/sub (no tables, no in place); blobs: input1, input2 (int16). */
static run_result run_add_sub16(const decoded_case *dc, const th_kalloc *mem)
{
    run_result rr = {TH_KCASE_BAD_RECORD, NULL, 0};
    if (dc->n_ints < 25 || dc->n_blobs != 2) {
        return rr;
    }
    const int32_t *v = dc->ints;
    const th_shape s1 = shape4_at(v + 1), s2 = shape4_at(v + 5), so = shape4_at(v + 9);
    const int64_t len1 = (int64_t)s1.dims[0] * s1.dims[1] * s1.dims[2] * s1.dims[3];
    const int64_t out_len = (int64_t)so.dims[0] * so.dims[1] * so.dims[2] * so.dims[3];
    if (2 * len1 != (int64_t)dc->blob_len[0] || out_len <= 0) {
        return rr;
    }
    const int16_t *in1 = copy_blob(mem, dc, 0);
    const int16_t *in2 = copy_blob(mem, dc, 1);
    int16_t *output = mem->alloc(mem->self, (size_t)(2 * out_len));
    if (in1 == NULL || in2 == NULL || output == NULL) {
        rr.status = TH_KCASE_NO_MEMORY;
        return rr;
    }
    th_add_params p;
    th_add_quant q;
    add_params_at(v, &p, &q);
    const th_context ctx = {NULL, 0};
    th_kcase_before_kernel();
    rr.status = dc->op == OP_ADD16 ? th_add_s16(&ctx, &p, &q, &s1, in1, &s2, in2, &so, output)
                                   : th_sub_s16(&ctx, &p, &q, &s1, in1, &s2, in2, &so, output);
    th_kcase_after_kernel();
    rr.out = (const int8_t *)output;
    rr.out_len = 2 * out_len;
    return rr;
}

/* lut ints: flags, n; blobs: table (256), input. In place: the output over the input. */
static run_result run_lut(const decoded_case *dc, const th_kalloc *mem)
{
    run_result rr = {TH_KCASE_BAD_RECORD, NULL, 0};
    if (dc->n_ints < 2 || dc->n_blobs != 2 || dc->blob_len[0] != 256u ||
        dc->ints[1] != (int32_t)dc->blob_len[1]) {
        return rr;
    }
    const int64_t n = dc->ints[1];
    const int8_t *table = copy_blob(mem, dc, 0);
    int8_t *input;
    int8_t *output;
    if (table == NULL || !io_buffers(mem, dc->ints[0] & FLAG_IN_PLACE, n, n, &input, &output)) {
        rr.status = TH_KCASE_NO_MEMORY;
        return rr;
    }
    memcpy(input, dc->blob[1], (size_t)n);
    th_kcase_before_kernel();
    rr.status = th_lut_s8(NULL, table, (int32_t)n, input, output);
    th_kcase_after_kernel();
    rr.out = output;
    rr.out_len = n;
    return rr;
}

/* softmax ints: flags, rows, depth, input_multiplier, input_left_shift, diff_min; blob:
 * input. OP_SOFTMAX16: int16 output (th_softmax_s8_s16). */
static run_result run_softmax(const decoded_case *dc, const th_kalloc *mem)
{
    run_result rr = {TH_KCASE_BAD_RECORD, NULL, 0};
    if (dc->n_ints < 6 || dc->n_blobs != 1) {
        return rr;
    }
    const int32_t *v = dc->ints;
    const int64_t n = (int64_t)v[1] * v[2];
    if (n <= 0 || n != (int64_t)dc->blob_len[0]) {
        return rr;
    }
    const int wide = dc->op == OP_SOFTMAX16;
    const int8_t *input = copy_blob(mem, dc, 0);
    void *output = mem->alloc(mem->self, (size_t)(wide ? 2 * n : n));
    if (input == NULL || output == NULL) {
        rr.status = TH_KCASE_NO_MEMORY;
        return rr;
    }
    th_shape shape;
    shape.rank = 2;
    shape.dims[0] = v[1];
    shape.dims[1] = v[2];
    th_softmax_params p;
    p.input_multiplier = v[3];
    p.input_left_shift = v[4];
    p.diff_min = v[5];
    const th_context ctx = {NULL, 0};
    th_kcase_before_kernel();
    rr.status = wide ? th_softmax_s8_s16(&ctx, &p, &shape, input, output)
                     : th_softmax_s8(&ctx, &p, &shape, input, output);
    th_kcase_after_kernel();
    rr.out = output;
    rr.out_len = wide ? 2 * n : n;
    return rr;
}

size_t th_kcase_run(const uint8_t *record, size_t record_len, const th_kalloc *mem,
                    uint8_t *out, size_t out_cap)
{
    decoded_case dc;
    run_result rr = {TH_KCASE_BAD_RECORD, NULL, 0};
    int32_t flags_value = 0;
    memset(&dc, 0, sizeof dc);
    if (decode(record, record_len, &dc)) {
        switch (dc.op) {
        case OP_CONV:
        case OP_CONV_1X1:
        case OP_CONV_3X3:
        case OP_CONV_GENERAL:
        case OP_DW:
        case OP_DW_3X3:
        case OP_DW_GENERAL:
            rr = run_conv_like(&dc, mem);
            break;
        case OP_FC:
        case OP_FC_PER_CHANNEL:
            rr = run_fc(&dc, mem);
            break;
        case OP_FC_W16:
            rr = run_fc_w16(&dc, mem);
            break;
        case OP_AVGPOOL:
        case OP_MAXPOOL:
            rr = run_pool(&dc, mem);
            break;
        case OP_MUL:
            rr = run_mul(&dc, mem);
            break;
        case OP_MEAN:
            rr = run_mean(&dc, mem);
            break;
        case OP_ADD:
        case OP_SUB:
            rr = run_add_sub(&dc, mem);
            break;
        case OP_ADD16:
        case OP_SUB16:
            rr = run_add_sub16(&dc, mem);
            break;
        case OP_LUT:
            rr = run_lut(&dc, mem);
            break;
        case OP_SOFTMAX:
        case OP_SOFTMAX16:
            rr = run_softmax(&dc, mem);
            break;
        case OP_BUILD_FLAGS:
            flags_value = th_nn_build_flags();
            rr.status = 0;
            rr.out = (const int8_t *)&flags_value;
            rr.out_len = 4;
            break;
        default:
            if (!th_kcase_run_movement(dc.op, dc.ints, dc.n_ints, dc.blob, dc.blob_len,
                                       dc.n_blobs, mem, &rr.status, &rr.out, &rr.out_len)) {
                rr.status = TH_KCASE_BAD_OP;
            }
            break;
        }
    }
    if (rr.status == TH_OK && !mem->guards_intact(mem->self)) {
        rr.status = TH_KCASE_GUARD;
    }
    const size_t payload = rr.status == TH_OK ? (size_t)rr.out_len : 0;
    const size_t total = 20 + ((payload + 3u) & ~(size_t)3u);
    if (total > out_cap) {
        mem->release_all(mem->self);
        return 0;
    }
    wr32(out, TH_KRESULT_MAGIC);
    wr32(out + 4, (uint32_t)total);
    wr32(out + 8, dc.case_id);
    wr32(out + 12, (uint32_t)rr.status);
    wr32(out + 16, (uint32_t)payload);
    memset(out + 20, 0, total - 20);
    if (payload > 0) {
        memcpy(out + 20, rr.out, payload);
    }
    mem->release_all(mem->self);
    return total;
}
