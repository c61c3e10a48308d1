#include "fake_app.h"

#include <string.h>

static fake_app *self(void *ctx) { return (fake_app *)ctx; }

/* th_proto passes the app context to write(); forward to the transport's. */
static void fa_write(void *ctx, const uint8_t *data, size_t len)
{
    fake_app *f = self(ctx);
    f->out(f->out_ctx, data, len);
}

static th_proto_status fa_info(void *ctx, th_proto_info *info)
{
    fake_app *f = self(ctx);
    info->fw_version = "th-test-device 1.0";
    info->board = "host";
    info->backend = "fake";
    info->model_name = f->model_loaded ? "loaded" : "builtin-echo";
    info->model_hash = f->model_hash;
    info->arena_size = 4096u;
    info->counter_unit = TH_PROTO_UNIT_HOST_NS;
    info->counter_hz = 1000000000u;
    info->flags = f->model_ready ? TH_PROTO_FLAG_MODEL_READY : 0u;
    info->n_ops = FAKE_N_OPS;
    info->n_inputs = 1;
    info->n_outputs = 2;
    info->inputs = f->inputs;
    info->outputs = f->outputs;
    return TH_PROTO_OK;
}

static th_proto_status fa_set_input(void *ctx, uint8_t tensor, uint32_t offset,
                                    const uint8_t *data, uint32_t len)
{
    fake_app *f = self(ctx);
    if (tensor != 0u) {
        th_proto_set_detail(&f->proto, tensor);
        return TH_PROTO_E_BAD_ARG;
    }
    if (offset > FAKE_IN_SIZE || len > FAKE_IN_SIZE - offset) {
        th_proto_set_detail(&f->proto, FAKE_IN_SIZE);
        return TH_PROTO_E_BAD_ARG;
    }
    memcpy(f->input + offset, data, len);
    f->set_input_chunks++;
    return TH_PROTO_OK;
}

static th_proto_status fa_invoke(void *ctx, uint64_t *elapsed, uint32_t *stack_peak)
{
    fake_app *f = self(ctx);
    uint32_t i, crc;
    if (!f->model_ready) {
        return TH_PROTO_E_BAD_STATE;
    }
    for (i = 0; i < FAKE_IN_SIZE; i++) {
        f->output[i] = (uint8_t)(f->input[i] * 3u + 1u);
    }
    crc = th_proto_crc32(0u, f->input, FAKE_IN_SIZE);
    f->out_crc[0] = (uint8_t)crc;
    f->out_crc[1] = (uint8_t)(crc >> 8);
    f->out_crc[2] = (uint8_t)(crc >> 16);
    f->out_crc[3] = (uint8_t)(crc >> 24);
    f->invoke_count++;
    f->have_output = 1;
    *elapsed = 1000u * (uint64_t)f->invoke_count;
    *stack_peak = 100u + f->invoke_count; /* made up, so the host's parsing shows */
    return TH_PROTO_OK;
}

static th_proto_status fa_get_output(void *ctx, uint8_t tensor, uint32_t offset, uint8_t *dst,
                                     uint32_t max, uint32_t *written, uint32_t *total)
{
    fake_app *f = self(ctx);
    const uint8_t *src;
    uint32_t size, n;
    if (!f->have_output) {
        return TH_PROTO_E_BAD_STATE;
    }
    if (tensor == 0u) {
        src = f->output;
        size = FAKE_IN_SIZE;
    } else if (tensor == 1u) {
        src = f->out_crc;
        size = 4u;
    } else {
        th_proto_set_detail(&f->proto, tensor);
        return TH_PROTO_E_BAD_ARG;
    }
    if (offset > size) {
        th_proto_set_detail(&f->proto, size);
        return TH_PROTO_E_BAD_ARG;
    }
    n = size - offset < max ? size - offset : max;
    memcpy(dst, src + offset, n);
    *written = n;
    *total = size;
    return TH_PROTO_OK;
}

static th_proto_status fa_get_profile(void *ctx, uint16_t first, uint32_t *counts, uint16_t max,
                                      uint16_t *written, uint16_t *total)
{
    fake_app *f = self(ctx);
    uint16_t i, n = 0;
    for (i = 0; i < max && (uint32_t)first + i < FAKE_N_OPS; i++) {
        uint32_t k = (uint32_t)first + i;
        counts[i] = k == 0u   ? f->invoke_count
                    : k == 1u ? f->set_input_chunks
                    : k == 2u ? f->load_chunks
                              : k * f->invoke_count;
        n++;
    }
    *written = n;
    *total = (uint16_t)FAKE_N_OPS;
    return TH_PROTO_OK;
}

static uint32_t rd32(const uint8_t *b)
{
    return (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) |
           ((uint32_t)b[3] << 24);
}

static th_proto_status fa_load_model(void *ctx, uint32_t offset, const uint8_t *chunk,
                                     uint32_t len, uint32_t total, int final)
{
    fake_app *f = self(ctx);
    if (total > FAKE_MODEL_MAX) {
        th_proto_set_detail(&f->proto, FAKE_MODEL_MAX);
        return TH_PROTO_E_TOO_LARGE;
    }
    if (offset == 0u) { /* a new load replaces (and meanwhile disables) the model */
        f->model_ready = 0;
        f->have_output = 0;
        f->model_received = 0;
        f->model_total = total;
    }
    if (offset != f->model_received || total != f->model_total || len > total - offset) {
        th_proto_set_detail(&f->proto, f->model_received);
        return TH_PROTO_E_BAD_ARG;
    }
    memcpy(f->model + offset, chunk, len);
    f->model_received += len;
    f->load_chunks++;
    if (final) {
        uint32_t crc;
        if (f->model_received != total || total < 4u) {
            th_proto_set_detail(&f->proto, 1u);
            return TH_PROTO_E_MODEL_INVALID;
        }
        crc = th_proto_crc32(0u, f->model, total - 4u);
        if (crc != rd32(f->model + total - 4u)) {
            th_proto_set_detail(&f->proto, 2u);
            return TH_PROTO_E_MODEL_INVALID;
        }
        f->model_ready = 1;
        f->model_loaded = 1;
        f->model_hash = crc;
    }
    return TH_PROTO_OK;
}

static void set_tensor(th_proto_tensor_info *t, uint8_t dtype, uint8_t rank, const uint32_t *dims,
                       float scale, int32_t zero_point)
{
    uint8_t d;
    memset(t, 0, sizeof *t);
    t->dtype = dtype;
    t->rank = rank;
    for (d = 0; d < rank; d++) {
        t->dims[d] = dims[d];
    }
    t->scale = scale;
    t->zero_point = zero_point;
}

void fake_app_init(fake_app *f, void (*write)(void *ctx, const uint8_t *data, size_t len),
                   void *write_ctx)
{
    static const uint32_t dims_io[3] = {1u, 40u, 50u};
    static const uint32_t dims_crc[1] = {1u};
    memset(f, 0, sizeof *f);
    set_tensor(&f->inputs[0], TH_PROTO_DT_INT8, 3, dims_io, 0.5f, -3);
    set_tensor(&f->outputs[0], TH_PROTO_DT_INT8, 3, dims_io, 0.25f, 7);
    set_tensor(&f->outputs[1], TH_PROTO_DT_INT32, 1, dims_crc, 0.0f, 0);
    f->model_ready = 1;
    f->model_hash = 0x12345678u;
    f->app.ctx = f;
    f->app.info = fa_info;
    f->app.set_input = fa_set_input;
    f->app.invoke = fa_invoke;
    f->app.get_output = fa_get_output;
    f->app.get_profile = fa_get_profile;
    f->app.load_model = fa_load_model;
    f->out = write;
    f->out_ctx = write_ctx;
    f->app.write = fa_write;
    th_proto_init(&f->proto, &f->app);
}
