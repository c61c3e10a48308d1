/*
 * tinyhost interpreter firmware: init the board, bind the compiled-in model blob, announce
 * READY, then serve the serial protocol (firmware/protocol/README.md) forever: INFO,
 * SET_INPUT, INVOKE (profiled per op), GET_OUTPUT, GET_PROFILE and LOAD_MODEL (a new blob,
 * validated completely before it replaces nothing-at-all: the old model is unusable from
 * the first chunk on, as the protocol says).
 */
#include <string.h>

#include "model_blob.h"
#include "th_board.h"
#include "th_interp.h"
#include "th_proto.h"
#include "th_selfcheck.h"

#define FW_VERSION "tinyhost-interp 1.0"
#define MAX_IO 16u

#ifndef TH_MODEL_LOAD_CAPACITY
#define TH_MODEL_LOAD_CAPACITY 0u
#endif

typedef struct {
    th_proto proto;
    th_interp interp;
    const uint8_t *model_src; /* th_model_blob or load_buf */
    uint32_t load_total;
    uint32_t load_received;
    uint8_t have_output;
    th_proto_tensor_info inputs[MAX_IO];
    th_proto_tensor_info outputs[MAX_IO];
} app_state;

static uint8_t arena[TH_MODEL_ARENA_BYTES > 0 ? TH_MODEL_ARENA_BYTES : 16] TH_ARENA;
#if TH_MODEL_LOAD_CAPACITY > 0
static uint8_t load_buf[TH_MODEL_LOAD_CAPACITY] __attribute__((aligned(16)));
#endif
static app_state app; /* file scope: a few KiB, kept off the stack */

static void uart_write(void *ctx, const uint8_t *data, size_t len)
{
    (void)ctx;
    th_uart_write(data, len);
}

static uint8_t counter_unit(void)
{
    const char *u = th_counter_unit();
    if (strcmp(u, "cycles") == 0) {
        return TH_PROTO_UNIT_CYCLES;
    }
    if (strcmp(u, "instructions") == 0) {
        return TH_PROTO_UNIT_INSTRUCTIONS;
    }
    if (strcmp(u, "host-ns") == 0) {
        return TH_PROTO_UNIT_HOST_NS;
    }
    if (strcmp(u, "systick") == 0) {
        return TH_PROTO_UNIT_SYSTICK;
    }
    return TH_PROTO_UNIT_NONE;
}

static void to_proto(const th_interp_tensor *t, th_proto_tensor_info *p)
{
    memset(p, 0, sizeof *p);
    p->dtype = t->dtype;
    p->rank = t->rank;
    for (uint32_t d = 0; d < t->rank && d < TH_PROTO_MAX_RANK; d++) {
        p->dims[d] = (uint32_t)t->dims[d];
    }
    p->scale = t->scale;
    p->zero_point = t->zero_point;
}

/* Bind a blob; on success cache the I/O descriptions INFO reports. */
static th_interp_status bind(app_state *a, const uint8_t *blob, uint32_t len)
{
    th_interp_status s = th_interp_init(&a->interp, blob, len, arena, sizeof arena);
    a->have_output = 0;
    if (s != TH_INTERP_OK) {
        return s;
    }
    if (th_interp_num_inputs(&a->interp) > MAX_IO || th_interp_num_outputs(&a->interp) > MAX_IO) {
        th_interp_reset(&a->interp);
        return TH_INTERP_E_TOO_MANY;
    }
    for (uint32_t i = 0; i < th_interp_num_inputs(&a->interp); i++) {
        th_interp_tensor t;
        th_interp_input(&a->interp, i, &t);
        to_proto(&t, &a->inputs[i]);
    }
    for (uint32_t i = 0; i < th_interp_num_outputs(&a->interp); i++) {
        th_interp_tensor t;
        th_interp_output(&a->interp, i, &t);
        to_proto(&t, &a->outputs[i]);
    }
    a->model_src = blob;
    return TH_INTERP_OK;
}

static th_proto_status cb_info(void *ctx, th_proto_info *info)
{
    app_state *a = ctx;
    const int ready = th_interp_ready(&a->interp);
    info->fw_version = FW_VERSION;
    info->board = th_board_name();
    info->backend = "interpreter";
    info->model_name = ready ? th_interp_model_name(&a->interp) : "";
    info->model_hash = th_interp_model_crc(&a->interp);
    info->arena_size = ready ? th_interp_arena_used(&a->interp) : (uint32_t)sizeof arena;
    info->counter_unit = counter_unit();
    info->counter_hz = (uint32_t)(th_counter_hz() > 0xFFFFFFFFu ? 0u : th_counter_hz());
    info->flags = ready ? TH_PROTO_FLAG_MODEL_READY : 0u;
    info->n_ops = (uint16_t)th_interp_num_ops(&a->interp);
    info->n_inputs = (uint8_t)th_interp_num_inputs(&a->interp);
    info->n_outputs = (uint8_t)th_interp_num_outputs(&a->interp);
    info->inputs = a->inputs;
    info->outputs = a->outputs;
    info->selfcheck = th_selfcheck_verdict();
    return TH_PROTO_OK;
}

static th_proto_status cb_set_input(void *ctx, uint8_t tensor, uint32_t offset,
                                    const uint8_t *data, uint32_t len)
{
    app_state *a = ctx;
    th_interp_tensor t;
    if (!th_interp_ready(&a->interp)) {
        return TH_PROTO_E_BAD_STATE;
    }
    if (th_interp_input(&a->interp, tensor, &t) != TH_INTERP_OK) {
        th_proto_set_detail(&a->proto, th_interp_num_inputs(&a->interp));
        return TH_PROTO_E_BAD_ARG;
    }
    if (offset > t.bytes || len > t.bytes - offset) {
        th_proto_set_detail(&a->proto, t.bytes);
        return TH_PROTO_E_BAD_ARG;
    }
    memcpy((uint8_t *)t.data + offset, data, len);
    a->have_output = 0; /* inputs and old outputs may share arena bytes */
    return TH_PROTO_OK;
}

static th_proto_status cb_invoke(void *ctx, uint64_t *elapsed)
{
    app_state *a = ctx;
    th_interp_status s;
    uint64_t total = 0;
    if (!th_interp_ready(&a->interp)) {
        return TH_PROTO_E_BAD_STATE;
    }
    s = th_interp_invoke_ex(&a->interp, 1);
    if (s != TH_INTERP_OK) {
        th_interp_error e = th_interp_last_error(&a->interp);
        th_proto_set_detail(&a->proto, (uint32_t)s | ((uint32_t)(e.op + 1) << 8));
        return TH_PROTO_E_INTERNAL;
    }
    (void)th_interp_profile(&a->interp, NULL, &total);
    *elapsed = total;
    a->have_output = 1;
    return TH_PROTO_OK;
}

static th_proto_status cb_get_output(void *ctx, uint8_t tensor, uint32_t offset, uint8_t *dst,
                                     uint32_t max, uint32_t *written, uint32_t *total)
{
    app_state *a = ctx;
    th_interp_tensor t;
    uint32_t n;
    if (!th_interp_ready(&a->interp) || !a->have_output) {
        return TH_PROTO_E_BAD_STATE;
    }
    if (th_interp_output(&a->interp, tensor, &t) != TH_INTERP_OK) {
        th_proto_set_detail(&a->proto, th_interp_num_outputs(&a->interp));
        return TH_PROTO_E_BAD_ARG;
    }
    if (offset > t.bytes) {
        th_proto_set_detail(&a->proto, t.bytes);
        return TH_PROTO_E_BAD_ARG;
    }
    n = t.bytes - offset < max ? t.bytes - offset : max;
    memcpy(dst, (const uint8_t *)t.data + offset, n);
    *written = n;
    *total = t.bytes;
    return TH_PROTO_OK;
}

static th_proto_status cb_get_profile(void *ctx, uint16_t first, uint32_t *counts, uint16_t max,
                                      uint16_t *written, uint16_t *total)
{
    app_state *a = ctx;
    uint32_t n = 0, k = 0;
    const uint32_t *prof;
    if (!th_interp_ready(&a->interp) || !a->have_output) {
        return TH_PROTO_E_BAD_STATE;
    }
    prof = th_interp_profile(&a->interp, &n, NULL);
    if (first > n) {
        th_proto_set_detail(&a->proto, n);
        return TH_PROTO_E_BAD_ARG;
    }
    for (; k < max && first + k < n; k++) {
        counts[k] = prof[first + k];
    }
    *written = (uint16_t)k;
    *total = (uint16_t)n;
    return TH_PROTO_OK;
}

static th_proto_status cb_load_model(void *ctx, uint32_t offset, const uint8_t *chunk,
                                     uint32_t len, uint32_t total, int final)
{
    app_state *a = ctx;
#if TH_MODEL_LOAD_CAPACITY > 0
    th_interp_status s;
    if (total > sizeof load_buf) {
        th_proto_set_detail(&a->proto, (uint32_t)sizeof load_buf);
        return TH_PROTO_E_TOO_LARGE;
    }
    if (offset == 0u) { /* a new load: the old model (maybe in load_buf) is gone */
        th_interp_reset(&a->interp);
        a->have_output = 0;
        a->load_total = total;
        a->load_received = 0;
    }
    if (offset != a->load_received || total != a->load_total || len > total - offset) {
        th_proto_set_detail(&a->proto, a->load_received);
        return TH_PROTO_E_BAD_ARG;
    }
    memcpy(load_buf + offset, chunk, len);
    a->load_received += len;
    if (!final) {
        return TH_PROTO_OK;
    }
    if (a->load_received != total) {
        th_proto_set_detail(&a->proto, a->load_received);
        return TH_PROTO_E_MODEL_INVALID;
    }
    s = bind(a, load_buf, total);
    if (s != TH_INTERP_OK) {
        th_interp_error e = th_interp_last_error(&a->interp);
        th_proto_set_detail(&a->proto, (uint32_t)s | ((uint32_t)(e.op + 1) << 8));
        return TH_PROTO_E_MODEL_INVALID;
    }
    return TH_PROTO_OK;
#else
    (void)offset;
    (void)chunk;
    (void)len;
    (void)total;
    (void)final;
    th_proto_set_detail(&a->proto, 0u);
    return TH_PROTO_E_TOO_LARGE;
#endif
}

int main(void)
{
    th_proto_app cbs;
    uint8_t byte;
    th_board_init();
    th_selfcheck_run(); /* verdict in INFO: the host refuses a target that fails it */
    memset(&cbs, 0, sizeof cbs);
    cbs.ctx = &app;
    cbs.write = uart_write;
    cbs.info = cb_info;
    cbs.set_input = cb_set_input;
    cbs.invoke = cb_invoke;
    cbs.get_output = cb_get_output;
    cbs.get_profile = cb_get_profile;
    cbs.load_model = cb_load_model;
    (void)bind(&app, th_model_blob, th_model_blob_len);
    th_proto_init(&app.proto, &cbs);
    th_proto_send_ready(&app.proto);
    for (;;) {
        if (!th_uart_read_byte(&byte, TH_WAIT_FOREVER)) {
            th_exit(0); /* host board: the link was closed */
        }
        th_proto_feed_byte(&app.proto, byte);
    }
}
