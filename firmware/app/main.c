/*
 * tinyhost protocol firmware: init the board, bind the model through th_model.h (whichever
 * backend implements it: the interpreter's blob or compiled code), announce READY, then serve
 * the serial protocol (firmware/protocol/README.md) forever: INFO, SET_INPUT, INVOKE
 * (profiled per op), GET_OUTPUT, GET_PROFILE and, where the backend can replace its model,
 * LOAD_MODEL (the old model is unusable from the first chunk on, as the protocol says).
 */
#include <string.h>

#include "th_board.h"
#include "th_model.h"
#include "th_proto.h"
#include "th_selfcheck.h"

#define FW_VERSION "tinyhost-fw 1.1"
#define MAX_IO ((uint32_t)TH_MODEL_MAX_IO)

typedef struct {
    th_proto proto;
    uint8_t have_output;
    th_proto_tensor_info inputs[MAX_IO];
    th_proto_tensor_info outputs[MAX_IO];
} app_state;

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

static void to_proto(const th_model_tensor *t, th_proto_tensor_info *p)
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

/* After a model is bound: cache the I/O descriptions INFO reports. */
static int describe_io(app_state *a)
{
    th_model_info m;
    th_model_get_info(&m);
    a->have_output = 0;
    if (!m.ready || m.n_inputs > MAX_IO || m.n_outputs > MAX_IO) {
        return 0;
    }
    for (uint32_t i = 0; i < m.n_inputs; i++) {
        th_model_tensor t;
        (void)th_model_input(i, &t);
        to_proto(&t, &a->inputs[i]);
    }
    for (uint32_t i = 0; i < m.n_outputs; i++) {
        th_model_tensor t;
        (void)th_model_output(i, &t);
        to_proto(&t, &a->outputs[i]);
    }
    return 1;
}

static int model_ready(void)
{
    th_model_info m;
    th_model_get_info(&m);
    return m.ready && m.n_inputs <= MAX_IO && m.n_outputs <= MAX_IO;
}

static th_proto_status cb_info(void *ctx, th_proto_info *info)
{
    app_state *a = ctx;
    th_model_info m;
    th_model_get_info(&m);
    info->fw_version = FW_VERSION;
    info->board = th_board_name();
    info->backend = m.backend;
    info->model_name = m.name;
    info->model_hash = m.hash;
    info->arena_size = m.arena_bytes;
    info->counter_unit = counter_unit();
    info->counter_hz = (uint32_t)(th_counter_hz() > 0xFFFFFFFFu ? 0u : th_counter_hz());
    info->flags = model_ready() ? TH_PROTO_FLAG_MODEL_READY : 0u;
    info->n_ops = (uint16_t)m.n_ops;
    info->n_inputs = (uint8_t)m.n_inputs;
    info->n_outputs = (uint8_t)m.n_outputs;
    info->inputs = a->inputs;
    info->outputs = a->outputs;
    info->selfcheck = th_selfcheck_verdict();
    return TH_PROTO_OK;
}

static th_proto_status cb_set_input(void *ctx, uint8_t tensor, uint32_t offset,
                                    const uint8_t *data, uint32_t len)
{
    app_state *a = ctx;
    th_model_tensor t;
    th_model_info m;
    if (!model_ready()) {
        return TH_PROTO_E_BAD_STATE;
    }
    if (th_model_input(tensor, &t) != TH_MODEL_OK) {
        th_model_get_info(&m);
        th_proto_set_detail(&a->proto, m.n_inputs);
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

static th_proto_status cb_invoke(void *ctx, uint64_t *elapsed, uint32_t *stack_peak)
{
    app_state *a = ctx;
    uint64_t total = 0;
    th_model_status s;
    if (!model_ready()) {
        return TH_PROTO_E_BAD_STATE;
    }
    th_stack_paint();
    s = th_model_invoke(1, &total);
    *stack_peak = th_stack_peak();
    if (*stack_peak != 0u && *stack_peak > th_stack_size() - TH_STACK_CANARY_BYTES) {
        /* Always checked, not only in debug builds: an overflow corrupts silently. */
        th_proto_set_detail(&a->proto, TH_MODEL_DETAIL_STACK_OVERFLOW);
        return TH_PROTO_E_INTERNAL;
    }
    if (s != TH_MODEL_OK) {
        th_proto_set_detail(&a->proto, th_model_detail());
        return TH_PROTO_E_INTERNAL;
    }
    *elapsed = total;
    a->have_output = 1;
    return TH_PROTO_OK;
}

static th_proto_status cb_get_output(void *ctx, uint8_t tensor, uint32_t offset, uint8_t *dst,
                                     uint32_t max, uint32_t *written, uint32_t *total)
{
    app_state *a = ctx;
    th_model_tensor t;
    th_model_info m;
    uint32_t n;
    if (!model_ready() || !a->have_output) {
        return TH_PROTO_E_BAD_STATE;
    }
    if (th_model_output(tensor, &t) != TH_MODEL_OK) {
        th_model_get_info(&m);
        th_proto_set_detail(&a->proto, m.n_outputs);
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
    if (!model_ready() || !a->have_output) {
        return TH_PROTO_E_BAD_STATE;
    }
    prof = th_model_profile(&n);
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
    th_model_status s;
    if (offset == 0u) {
        a->have_output = 0;
    }
    s = th_model_load_chunk(offset, chunk, len, total, final);
    if (s != TH_MODEL_OK) {
        th_proto_set_detail(&a->proto, th_model_detail());
    }
    switch (s) {
    case TH_MODEL_OK:
        if (final && !describe_io(a)) {
            return TH_PROTO_E_MODEL_INVALID; /* more inputs/outputs than INFO can describe */
        }
        return TH_PROTO_OK;
    case TH_MODEL_E_TOO_LARGE:
        return TH_PROTO_E_TOO_LARGE;
    case TH_MODEL_E_SEQUENCE:
        return TH_PROTO_E_BAD_ARG;
    case TH_MODEL_E_UNSUPPORTED:
        return TH_PROTO_E_UNSUPPORTED;
    default:
        return TH_PROTO_E_MODEL_INVALID;
    }
}

static th_proto_status cb_reset_state(void *ctx)
{
    app_state *a = ctx;
    if (!model_ready()) {
        return TH_PROTO_E_BAD_STATE;
    }
    if (th_model_reset_state() != TH_MODEL_OK) {
        th_proto_set_detail(&a->proto, th_model_detail());
        return TH_PROTO_E_INTERNAL;
    }
    return TH_PROTO_OK;
}

/* The board's fault handler calls this before it ends the program: the host learns which op
 * faulted and how (FAULT frame, firmware/protocol/README.md) instead of a silent link. */
void th_fault_hook(const th_fault_info *info)
{
    uint8_t pl[TH_PROTO_FAULT_PAYLOAD];
    const uint32_t words[7] = {info->pc, info->lr, info->xpsr, info->cfsr, info->hfsr,
                               info->mmfar, info->bfar};
    const int32_t op = th_model_running_op();
    pl[0] = (uint8_t)info->exception;
    for (unsigned k = 0; k < 4u; k++) {
        pl[1 + k] = (uint8_t)((uint32_t)op >> (8u * k));
    }
    for (unsigned w = 0; w < 7u; w++) {
        for (unsigned k = 0; k < 4u; k++) {
            pl[5 + 4 * w + k] = (uint8_t)(words[w] >> (8u * k));
        }
    }
    th_proto_send_fault(&app.proto, pl);
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
    /* A backend that cannot replace its model leaves LOAD_MODEL unhandled: the protocol
     * answers ERROR UNSUPPORTED, and the host says why. */
    cbs.load_model = th_model_can_load() ? cb_load_model : NULL;
    cbs.reset_state = cb_reset_state;
    if (th_model_init() == TH_MODEL_OK) {
        (void)describe_io(&app);
    }
    th_proto_init(&app.proto, &cbs);
    th_proto_send_ready(&app.proto);
    for (;;) {
        if (!th_uart_read_byte(&byte, TH_WAIT_FOREVER)) {
            th_exit(0); /* host board: the link was closed */
        }
        th_proto_feed_byte(&app.proto, byte);
    }
}
