/*
 * th_interp.c - blob validation, op dispatch and profiling (BLOB_FORMAT.md).
 *
 * Every read of the blob goes through a range check done in 64-bit arithmetic against
 * total_size (or the arena size), so no pointer is ever formed outside the blob or arena,
 * whatever the bytes say. The blob is validated completely in th_interp_init; invoke then
 * only decodes what init already accepted.
 */
#include "th_interp.h"

#include <string.h>

#include "th_interp_ops.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "th_interp reads the little-endian blob in place: little-endian targets only"
#endif

#ifndef TH_INTERP_FILTER_INTERLEAVED
#include "th_nn.h"
#define TH_INTERP_FILTER_INTERLEAVED TH_NN_FILTER_INTERLEAVED
#endif
#ifndef TH_INTERP_MVE
#include "th_nn.h"
#define TH_INTERP_MVE TH_NN_MVE /* the kernels' Helium build: its own scratch plan */
#endif

/* The board's free-running counter (th_board.h); only used when profiling. */
uint64_t th_counter_read(void);

#include "th_profile.h" /* the mark contract: TH_PROFILE_MARK */

#define HEADER_SIZE 80u
#define TENSOR_SIZE 48u
#define OP_SIZE 32u
#define SECTION_ALIGN 16u
#define CRC_START 16u
#define KNOWN_FLAGS 0x3u

static const uint8_t MAGIC[4] = {'T', 'H', 'I', 'B'};

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

/* CRC-32 (IEEE, reflected, zlib.crc32), nibble table: 64 bytes of rodata. */
static uint32_t crc32(const uint8_t *data, uint32_t len)
{
    static const uint32_t table[16] = {
        0x00000000u, 0x1DB71064u, 0x3B6E20C8u, 0x26D930ACu, 0x76DC4190u, 0x6B6B51F4u,
        0x4DB26158u, 0x5005713Cu, 0xEDB88320u, 0xF00F9344u, 0xD6D6A3E8u, 0xCB61B38Cu,
        0x9B64C2B0u, 0x86D3D2D4u, 0xA00AE278u, 0xBDBDF21Cu};
    uint32_t crc = 0xFFFFFFFFu;
    for (uint32_t i = 0; i < len; i++) {
        crc ^= data[i];
        crc = (crc >> 4) ^ table[crc & 15u];
        crc = (crc >> 4) ^ table[crc & 15u];
    }
    return crc ^ 0xFFFFFFFFu;
}

static th_interp_status fail(th_interp *ctx, th_interp_status s, int32_t op, uint32_t detail)
{
    ctx->ready = 0;
    ctx->error.status = s;
    ctx->error.op = op;
    ctx->error.detail = detail;
    return s;
}

/* [off, off + size) inside [0, limit)? All in 64 bits: no wrap-around. */
static int in_range(uint64_t off, uint64_t size, uint64_t limit)
{
    return off <= limit && size <= limit - off;
}

static const th_interp_kernel *find_kernel(uint32_t id)
{
    for (uint32_t k = 0; k < th_interp_kernel_count; k++) {
        if (th_interp_kernels[k].id == id) {
            return &th_interp_kernels[k];
        }
    }
    return NULL;
}

static uint32_t dtype_size(uint8_t dtype)
{
    switch (dtype) {
    case TH_INTERP_INT8:
    case TH_INTERP_UINT8:
        return 1;
    case TH_INTERP_INT16:
        return 2;
    case TH_INTERP_INT32:
    case TH_INTERP_FLOAT32:
        return 4;
    case TH_INTERP_INT64:
        return 8;
    default:
        return 0;
    }
}

/* Decode tensor record `idx` (already validated by check_tensor). */
static void decode_tensor(const th_interp *ctx, uint32_t idx, th_interp_tensor *t)
{
    const uint8_t *r = ctx->blob + ctx->tensors_off + idx * TENSOR_SIZE;
    const uint32_t off = rd32(r + 28);
    float scale;
    t->dtype = r[0];
    t->rank = r[1];
    t->flags = r[3];
    t->present = 1;
    for (uint32_t d = 0; d < TH_INTERP_MAX_RANK; d++) {
        t->dims[d] = (int32_t)rd32(r + 4 + 4 * d);
    }
    t->bytes = rd32(r + 32);
    memcpy(&scale, r + 36, sizeof scale);
    t->scale = scale;
    t->zero_point = (int32_t)rd32(r + 40);
    if (r[2] == TH_LOC_ARENA) {
        t->data = ctx->arena + off;
    } else if (r[2] == TH_LOC_CONST) {
        /* constants are never written: the cast only lets one struct describe both */
        t->data = (void *)(uintptr_t)(ctx->blob + ctx->consts_off + off);
    } else {
        t->data = NULL;
    }
}

static uint8_t tensor_loc(const th_interp *ctx, uint32_t idx)
{
    return ctx->blob[ctx->tensors_off + idx * TENSOR_SIZE + 2];
}

static th_interp_status check_tensor(th_interp *ctx, uint32_t idx)
{
    const uint8_t *r = ctx->blob + ctx->tensors_off + idx * TENSOR_SIZE;
    const uint8_t dtype = r[0], rank = r[1], loc = r[2], flags = r[3];
    const uint32_t off = rd32(r + 28), nbytes = rd32(r + 32);
    uint64_t elements = 1;
    if (loc > TH_LOC_CONST || (flags & ~(TH_TENSOR_INTERLEAVED | TH_TENSOR_VARIABLE)) != 0 ||
        rank > TH_INTERP_MAX_RANK ||
        ((flags & TH_TENSOR_VARIABLE) != 0 &&
         (loc != TH_LOC_ARENA || (flags & TH_TENSOR_INTERLEAVED) != 0))) {
        return fail(ctx, TH_INTERP_E_TENSOR, -1, idx);
    }
    if (loc == TH_LOC_NONE) {
        return TH_INTERP_OK; /* never touched by an op (e.g. a RESHAPE's shape operand) */
    }
    if (dtype_size(dtype) == 0 || (dtype == TH_INTERP_INT64 && loc != TH_LOC_CONST)) {
        return fail(ctx, TH_INTERP_E_TENSOR, -1, idx);
    }
    for (uint32_t d = 0; d < TH_INTERP_MAX_RANK; d++) {
        const int32_t dim = (int32_t)rd32(r + 4 + 4 * d);
        if (d < rank) {
            if (dim <= 0) {
                return fail(ctx, TH_INTERP_E_TENSOR, -1, idx);
            }
            elements *= (uint32_t)dim;
            if (elements > 0x3FFFFFFFu) { /* < 2^30: kernels index in int32 */
                return fail(ctx, TH_INTERP_E_TENSOR, -1, idx);
            }
        } else if (dim != 0) {
            return fail(ctx, TH_INTERP_E_TENSOR, -1, idx);
        }
    }
    /* Interleaved filters are padded: their exact size is checked by the adapter. */
    if ((flags & TH_TENSOR_INTERLEAVED) == 0 && elements * dtype_size(dtype) != nbytes) {
        return fail(ctx, TH_INTERP_E_TENSOR, -1, idx);
    }
    if ((flags & TH_TENSOR_INTERLEAVED) != 0 && (loc != TH_LOC_CONST || nbytes < elements)) {
        return fail(ctx, TH_INTERP_E_TENSOR, -1, idx);
    }
    if ((off & 3u) != 0 ||
        !in_range(off, nbytes, loc == TH_LOC_ARENA ? ctx->arena_size : ctx->consts_size)) {
        return fail(ctx, TH_INTERP_E_TENSOR, -1, idx);
    }
    return TH_INTERP_OK;
}

/* Fill the op view of op `i`. With check != 0, also validate the record; otherwise it was
 * validated at init. */
static th_interp_status decode_op(th_interp *ctx, uint32_t i, th_interp_op *op,
                                  uint16_t *kernel_id, int check)
{
    const uint8_t *r = ctx->blob + ctx->ops_off + i * OP_SIZE;
    const uint32_t io_first = rd32(r + 4), params_first = rd32(r + 8);
    const uint32_t n_params = rd32(r + 12), s_off = rd32(r + 16), s_size = rd32(r + 20);
    const uint8_t *io;
    *kernel_id = rd16(r);
    op->ctx = ctx;
    op->index = i;
    op->n_in = r[2];
    op->n_out = r[3];
    op->in = op->io;
    op->out = op->io + (op->n_in <= TH_INTERP_MAX_OP_IO ? op->n_in : 0u);
    if (check) {
        if (op->n_in > TH_INTERP_MAX_OP_INPUTS || op->n_out == 0 ||
            op->n_out > TH_INTERP_MAX_OP_OUTPUTS ||
            op->n_in + op->n_out > TH_INTERP_MAX_OP_IO ||
            !in_range(io_first, (uint64_t)op->n_in + op->n_out, ctx->io_count) ||
            !in_range(params_first, n_params, ctx->params_words) ||
            (s_size != 0 && ((s_off & 3u) != 0 || !in_range(s_off, s_size, ctx->arena_size))) ||
            rd32(r + 28) != 0) {
            return fail(ctx, TH_INTERP_E_OP, (int32_t)i, i);
        }
    }
    io = ctx->blob + ctx->io_off + 2u * io_first;
    for (uint32_t k = 0; k < op->n_in + op->n_out; k++) {
        const uint32_t t = rd16(io + 2u * k);
        th_interp_tensor *dst = &op->io[k];
        if (t == TH_INTERP_ABSENT) {
            if (check && k >= op->n_in) {
                return fail(ctx, TH_INTERP_E_OP, (int32_t)i, i);
            }
            memset(dst, 0, sizeof *dst);
            continue;
        }
        if (check) {
            const uint8_t loc = t < ctx->n_tensors ? tensor_loc(ctx, t) : TH_LOC_NONE;
            /* inputs may be constants; outputs are always written, so in the arena */
            if (loc == TH_LOC_NONE || (k >= op->n_in && loc != TH_LOC_ARENA)) {
                return fail(ctx, TH_INTERP_E_OP, (int32_t)i, i);
            }
        }
        decode_tensor(ctx, t, dst);
    }
    op->params = (const int32_t *)(const void *)(ctx->blob + ctx->params_off + 4u * params_first);
    op->n_params = n_params;
    op->scratch = s_size != 0 ? ctx->arena + s_off : NULL;
    op->scratch_size = s_size;
    return TH_INTERP_OK;
}

static th_interp_status check_sections(th_interp *ctx, uint32_t total)
{
    /* Sections in file order, each 16-byte aligned, none overlapping the next. */
    const uint64_t starts[6] = {ctx->tensors_off, ctx->ops_off, ctx->io_off, ctx->params_off,
                                ctx->name_off, ctx->consts_off};
    const uint64_t sizes[6] = {(uint64_t)ctx->n_tensors * TENSOR_SIZE,
                               (uint64_t)ctx->n_ops * OP_SIZE, (uint64_t)ctx->io_count * 2u,
                               (uint64_t)ctx->params_words * 4u, (uint64_t)ctx->name_len + 1u,
                               ctx->consts_size};
    uint64_t end = HEADER_SIZE;
    for (uint32_t s = 0; s < 6; s++) {
        if (starts[s] < end || (starts[s] % SECTION_ALIGN) != 0 ||
            !in_range(starts[s], sizes[s], total)) {
            return fail(ctx, TH_INTERP_E_LAYOUT, -1, s);
        }
        end = starts[s] + sizes[s];
    }
    if (ctx->blob[ctx->name_off + ctx->name_len] != 0) {
        return fail(ctx, TH_INTERP_E_LAYOUT, -1, 4);
    }
    return TH_INTERP_OK;
}

th_interp_status th_interp_init(th_interp *ctx, const uint8_t *blob, uint32_t blob_len,
                                uint8_t *arena, uint32_t arena_len)
{
    const uint8_t *h = blob;
    uint32_t total;
    th_interp_status s;
    if (ctx == NULL) {
        return TH_INTERP_E_ARG;
    }
    memset(ctx, 0, sizeof *ctx);
    ctx->running_op = -1;
    ctx->error.op = -1;
    if (blob == NULL || (arena == NULL && arena_len != 0) || ((uintptr_t)blob & 3u) != 0 ||
        ((uintptr_t)arena & 3u) != 0) {
        return fail(ctx, TH_INTERP_E_ARG, -1, 0);
    }
    if (blob_len < HEADER_SIZE) {
        return fail(ctx, TH_INTERP_E_TRUNCATED, -1, blob_len);
    }
    if (memcmp(h, MAGIC, 4) != 0) {
        return fail(ctx, TH_INTERP_E_MAGIC, -1, rd32(h));
    }
    if (rd16(h + 4) != TH_INTERP_BLOB_VERSION) {
        return fail(ctx, TH_INTERP_E_VERSION, -1, rd16(h + 4));
    }
    if (rd16(h + 6) != HEADER_SIZE) {
        return fail(ctx, TH_INTERP_E_LAYOUT, -1, rd16(h + 6));
    }
    total = rd32(h + 8);
    if (total > blob_len) {
        return fail(ctx, TH_INTERP_E_TRUNCATED, -1, total);
    }
    if (total < HEADER_SIZE) {
        return fail(ctx, TH_INTERP_E_LAYOUT, -1, total);
    }
    ctx->crc = rd32(h + 12);
    if (crc32(h + CRC_START, total - CRC_START) != ctx->crc) {
        return fail(ctx, TH_INTERP_E_CRC, -1, ctx->crc);
    }
    ctx->blob = blob;
    ctx->blob_len = total;
    ctx->arena = arena;
    ctx->arena_len = arena_len;
    ctx->flags = rd32(h + 16);
    ctx->arena_size = rd32(h + 20);
    if (rd16(h + 24) != TH_INTERP_KERNEL_ABI) {
        return fail(ctx, TH_INTERP_E_VERSION, -1, rd16(h + 24));
    }
    ctx->n_tensors = rd16(h + 26);
    ctx->n_ops = rd16(h + 28);
    ctx->n_inputs = h[30];
    ctx->n_outputs = h[31];
    ctx->tensors_off = rd32(h + 32);
    ctx->ops_off = rd32(h + 36);
    ctx->io_off = rd32(h + 40);
    ctx->io_count = rd32(h + 44);
    ctx->params_off = rd32(h + 48);
    ctx->params_words = rd32(h + 52);
    ctx->consts_off = rd32(h + 56);
    ctx->consts_size = rd32(h + 60);
    ctx->name_off = rd32(h + 64);
    ctx->name_len = rd32(h + 68);
    if (rd32(h + 72) != 0 || rd32(h + 76) != 0) {
        return fail(ctx, TH_INTERP_E_LAYOUT, -1, 72);
    }
    if ((ctx->flags & ~KNOWN_FLAGS) != 0 ||
        (ctx->flags & 1u) != (uint32_t)(TH_INTERP_FILTER_INTERLEAVED ? 1u : 0u) ||
        (ctx->flags & 2u) != (uint32_t)(TH_INTERP_MVE ? 2u : 0u)) {
        return fail(ctx, TH_INTERP_E_BUILD, -1, ctx->flags);
    }
    s = check_sections(ctx, total);
    if (s != TH_INTERP_OK) {
        return s;
    }
    if (ctx->n_ops > TH_INTERP_MAX_OPS) {
        return fail(ctx, TH_INTERP_E_TOO_MANY, -1, ctx->n_ops);
    }
    if (ctx->arena_size > arena_len) {
        return fail(ctx, TH_INTERP_E_ARENA, -1, ctx->arena_size);
    }
    for (uint32_t t = 0; t < ctx->n_tensors; t++) {
        s = check_tensor(ctx, t);
        if (s != TH_INTERP_OK) {
            return s;
        }
    }
    /* model inputs and outputs: arena tensors, listed first in the io list */
    if ((uint64_t)ctx->n_inputs + ctx->n_outputs > ctx->io_count || ctx->n_outputs == 0) {
        return fail(ctx, TH_INTERP_E_LAYOUT, -1, ctx->io_count);
    }
    for (uint32_t k = 0; k < ctx->n_inputs + ctx->n_outputs; k++) {
        const uint32_t t = rd16(ctx->blob + ctx->io_off + 2u * k);
        if (t >= ctx->n_tensors || tensor_loc(ctx, t) != TH_LOC_ARENA) {
            return fail(ctx, TH_INTERP_E_TENSOR, -1, t);
        }
    }
    for (uint32_t i = 0; i < ctx->n_ops; i++) {
        th_interp_op op;
        uint16_t id;
        uint32_t need = 0;
        const th_interp_kernel *k;
        s = decode_op(ctx, i, &op, &id, 1);
        if (s != TH_INTERP_OK) {
            return s;
        }
        k = find_kernel(id);
        if (k == NULL) {
            return fail(ctx, TH_INTERP_E_KERNEL, (int32_t)i, id);
        }
        s = k->prepare(&op, &need);
        if (s != TH_INTERP_OK) {
            return fail(ctx, s, (int32_t)i, id);
        }
        if (need > op.scratch_size) {
            return fail(ctx, TH_INTERP_E_SCRATCH, (int32_t)i, need);
        }
    }
    ctx->error.status = TH_INTERP_OK;
    ctx->ready = 1;
    return th_interp_reset_state(ctx); /* variable tensors start as after a reset, as in TFLM */
}

th_interp_status th_interp_reset_state(th_interp *ctx)
{
    if (!th_interp_ready(ctx)) {
        return ctx == NULL ? TH_INTERP_E_ARG : TH_INTERP_E_STATE;
    }
    for (uint32_t t = 0; t < ctx->n_tensors; t++) {
        th_interp_tensor v;
        if ((ctx->blob[ctx->tensors_off + t * TENSOR_SIZE + 3] & TH_TENSOR_VARIABLE) == 0) {
            continue;
        }
        decode_tensor(ctx, t, &v);
        /* TFLM's ResetVariableTensors: int8 to the zero point, any other type to 0 bytes */
        memset(v.data, v.dtype == TH_INTERP_INT8 ? (int)(uint8_t)v.zero_point : 0, v.bytes);
    }
    return TH_INTERP_OK;
}

void th_interp_reset(th_interp *ctx)
{
    if (ctx != NULL) {
        ctx->ready = 0;
        ctx->error.status = TH_INTERP_E_STATE;
        ctx->error.op = -1;
        ctx->error.detail = 0;
    }
}

int th_interp_ready(const th_interp *ctx)
{
    return ctx != NULL && ctx->ready;
}

uint32_t th_interp_num_inputs(const th_interp *ctx)
{
    return th_interp_ready(ctx) ? ctx->n_inputs : 0u;
}

uint32_t th_interp_num_outputs(const th_interp *ctx)
{
    return th_interp_ready(ctx) ? ctx->n_outputs : 0u;
}

uint32_t th_interp_num_ops(const th_interp *ctx)
{
    return th_interp_ready(ctx) ? ctx->n_ops : 0u;
}

uint32_t th_interp_arena_used(const th_interp *ctx)
{
    return th_interp_ready(ctx) ? ctx->arena_size : 0u;
}

const char *th_interp_model_name(const th_interp *ctx)
{
    return th_interp_ready(ctx) ? (const char *)(ctx->blob + ctx->name_off) : "";
}

uint32_t th_interp_model_crc(const th_interp *ctx)
{
    return th_interp_ready(ctx) ? ctx->crc : 0u;
}

static th_interp_status io_tensor(th_interp *ctx, uint32_t k, th_interp_tensor *info)
{
    decode_tensor(ctx, rd16(ctx->blob + ctx->io_off + 2u * k), info);
    return TH_INTERP_OK;
}

th_interp_status th_interp_input(th_interp *ctx, uint32_t index, th_interp_tensor *info)
{
    if (!th_interp_ready(ctx) || info == NULL) {
        return TH_INTERP_E_STATE;
    }
    if (index >= ctx->n_inputs) {
        return TH_INTERP_E_INDEX;
    }
    return io_tensor(ctx, index, info);
}

th_interp_status th_interp_output(th_interp *ctx, uint32_t index, th_interp_tensor *info)
{
    if (!th_interp_ready(ctx) || info == NULL) {
        return TH_INTERP_E_STATE;
    }
    if (index >= ctx->n_outputs) {
        return TH_INTERP_E_INDEX;
    }
    return io_tensor(ctx, ctx->n_inputs + index, info);
}

th_interp_status th_interp_invoke_ex(th_interp *ctx, int profile)
{
    uint64_t start = 0, prev = 0;
    if (!th_interp_ready(ctx)) {
        return ctx == NULL ? TH_INTERP_E_ARG : TH_INTERP_E_STATE;
    }
    TH_PROFILE_MARK(profile);
    if (profile) {
        start = prev = th_counter_read();
    }
    for (uint32_t i = 0; i < ctx->n_ops; i++) {
        th_interp_op op;
        uint16_t id;
        const th_interp_kernel *k;
        th_interp_status s;
        (void)decode_op(ctx, i, &op, &id, 0);
        k = find_kernel(id);
        ctx->running_op = (int32_t)i;
        TH_PROFILE_MARK(profile);
        s = k != NULL ? k->eval(&op) : TH_INTERP_E_KERNEL;
        TH_PROFILE_MARK(profile);
        ctx->running_op = -1;
        if (s != TH_INTERP_OK) {
            ctx->error.status = s;
            ctx->error.op = (int32_t)i;
            ctx->error.detail = id;
            return s;
        }
        if (profile) {
            const uint64_t now = th_counter_read();
            const uint64_t d = now - prev;
            ctx->profile[i] = d > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)d;
            prev = now;
        }
    }
    ctx->last_total = profile ? prev - start : 0u;
    TH_PROFILE_MARK(profile);
    return TH_INTERP_OK;
}

th_interp_status th_interp_invoke(th_interp *ctx)
{
    return th_interp_invoke_ex(ctx, 0);
}

th_interp_error th_interp_last_error(const th_interp *ctx)
{
    th_interp_error e = {TH_INTERP_E_ARG, -1, 0};
    return ctx != NULL ? ctx->error : e;
}

const char *th_interp_status_name(th_interp_status status)
{
    static const char *const names[] = {
        "ok", "bad argument", "truncated blob", "bad magic", "unsupported version",
        "CRC mismatch", "bad section layout", "blob built for another kernel build",
        "bad tensor record", "bad op record", "kernel not in this firmware",
        "op parameters inconsistent", "arena too small", "scratch too small",
        "too many ops", "no valid model", "index out of range", "kernel failed"};
    return (uint32_t)status < sizeof names / sizeof names[0] ? names[status] : "unknown";
}

const uint32_t *th_interp_profile(const th_interp *ctx, uint32_t *n, uint64_t *total)
{
    if (n != NULL) {
        *n = th_interp_ready(ctx) ? ctx->n_ops : 0u;
    }
    if (total != NULL) {
        *total = ctx != NULL ? ctx->last_total : 0u;
    }
    return ctx != NULL ? ctx->profile : NULL;
}

int32_t th_interp_op_source(const th_interp *ctx, uint32_t i)
{
    if (!th_interp_ready(ctx) || i >= ctx->n_ops) {
        return -1;
    }
    return rd16(ctx->blob + ctx->ops_off + i * OP_SIZE + 24);
}

int32_t th_interp_op_kernel(const th_interp *ctx, uint32_t i)
{
    if (!th_interp_ready(ctx) || i >= ctx->n_ops) {
        return -1;
    }
    return rd16(ctx->blob + ctx->ops_off + i * OP_SIZE);
}

/* --- helpers for adapters -------------------------------------------------------------- */

const void *th_interp_const(const th_interp_op *op, int32_t offset, uint32_t count,
                            uint32_t elem_size)
{
    const th_interp *ctx = op->ctx;
    if (offset < 0 || elem_size == 0 || ((uint32_t)offset % elem_size) != 0 ||
        !in_range((uint32_t)offset, (uint64_t)count * elem_size, ctx->consts_size)) {
        return NULL;
    }
    return ctx->blob + ctx->consts_off + (uint32_t)offset;
}

int th_interp_is(const th_interp_tensor *t, uint8_t dtype, uint8_t rank)
{
    return t->present && t->data != NULL && t->dtype == dtype && t->rank == rank;
}

uint32_t th_interp_elements(const th_interp_tensor *t)
{
    uint32_t n = 1;
    for (uint32_t d = 0; d < t->rank; d++) {
        n *= (uint32_t)t->dims[d]; /* bounded below 2^30 by check_tensor */
    }
    return n;
}
