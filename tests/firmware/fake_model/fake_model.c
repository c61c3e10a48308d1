/*
 * fake_model.c - th_model.h without an interpreter: one int8 input of 4 values, one output
 * that is the input plus one (saturating), two "ops" in the profile, no load hook. Built with
 * firmware/app by tests/test_model_interface.py to show that the app reaches the model only
 * through th_model.h.
 */
#include <string.h>

#include "th_model.h"

static int8_t arena[8];
static uint32_t profile[2];
static int bound;

th_model_status th_model_init(void)
{
    bound = 1;
    return TH_MODEL_OK;
}

void th_model_get_info(th_model_info *info)
{
    info->backend = "fake";
    info->name = "plus_one";
    info->hash = 0x12345678u;
    info->arena_bytes = (uint32_t)sizeof arena;
    info->n_ops = 2;
    info->n_inputs = 1;
    info->n_outputs = 1;
    info->ready = bound;
}

static th_model_status describe(uint32_t index, int8_t *data, th_model_tensor *t)
{
    if (index != 0u) {
        return TH_MODEL_E_INDEX;
    }
    memset(t, 0, sizeof *t);
    t->data = data;
    t->bytes = 4;
    t->dtype = TH_MODEL_INT8;
    t->rank = 2;
    t->dims[0] = 1;
    t->dims[1] = 4;
    t->scale = 0.5f;
    t->zero_point = -3;
    return TH_MODEL_OK;
}

th_model_status th_model_input(uint32_t index, th_model_tensor *t)
{
    return describe(index, &arena[0], t);
}

th_model_status th_model_output(uint32_t index, th_model_tensor *t)
{
    return describe(index, &arena[4], t);
}

th_model_status th_model_invoke(int profile_on, uint64_t *total)
{
    for (int i = 0; i < 4; i++) {
        arena[4 + i] = (int8_t)(arena[i] == 127 ? 127 : arena[i] + 1);
    }
    profile[0] = profile_on ? 10u : 0u;
    profile[1] = profile_on ? 20u : 0u;
    if (total != NULL) {
        *total = profile_on ? 30u : 0u;
    }
    return TH_MODEL_OK;
}

th_model_status th_model_reset_state(void)
{
    return TH_MODEL_OK; /* no state */
}

const uint32_t *th_model_profile(uint32_t *n_ops)
{
    *n_ops = 2;
    return profile;
}

uint32_t th_model_detail(void)
{
    return 0;
}

int32_t th_model_running_op(void)
{
    return -1;
}

int th_model_can_load(void)
{
    return 0;
}

uint32_t th_model_load_capacity(void)
{
    return 0;
}

th_model_status th_model_load_chunk(uint32_t offset, const uint8_t *chunk, uint32_t len,
                                    uint32_t total, int final)
{
    (void)offset;
    (void)chunk;
    (void)len;
    (void)total;
    (void)final;
    return TH_MODEL_E_UNSUPPORTED;
}
