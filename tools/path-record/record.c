/* Records the optional kernel paths (kernels_c/include/th_nn_paths.h) a compiled model takes.
 *
 * codegen/prune.py builds this file on the host with the model's model.c and the kernels
 * compiled with TH_NN_RECORD_PATHS (the DSP ones modelled in C, TH_NN_EMULATE_DSP), runs one
 * invoke on zero inputs and reads the names printed, one per line, after "paths:". Which
 * path a kernel takes depends on shapes, parameters and quantization, all constants of the
 * compiled model, not on the input values.
 */
#include <stdio.h>
#include <string.h>

#include "th_model.h"

#define MAX_PATHS 128

/* This program's record of the paths taken (a recording build only; kernels keep no state). */
static const char *taken[MAX_PATHS];
static int n_taken;

void th_nn_path_taken(const char *name)
{
    for (int i = 0; i < n_taken; i++) {
        if (strcmp(taken[i], name) == 0) {
            return;
        }
    }
    if (n_taken < MAX_PATHS) {
        taken[n_taken++] = name;
    }
}

int main(void)
{
    th_model_info info;
    th_model_tensor in;
    if (th_model_init() != TH_MODEL_OK) {
        fprintf(stderr, "model init failed (detail %u)\n", (unsigned)th_model_detail());
        return 1;
    }
    th_model_get_info(&info);
    for (uint32_t i = 0; i < info.n_inputs; i++) {
        if (th_model_input(i, &in) != TH_MODEL_OK) {
            return 1;
        }
        memset(in.data, 0, in.bytes);
    }
    uint64_t total = 0;
    if (th_model_invoke(0, &total) != TH_MODEL_OK) {
        fprintf(stderr, "invoke failed (detail %u)\n", (unsigned)th_model_detail());
        return 2;
    }
    printf("paths:\n");
    for (int i = 0; i < n_taken; i++) {
        printf("%s\n", taken[i]);
    }
    return 0;
}
