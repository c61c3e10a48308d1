/*
 * icount.c - exact instruction counter between two marker addresses, as a
 * QEMU TCG plugin (tinyhost, ARCHITECTURE.md §4.7, §4.10).
 *
 *   qemu-system-arm ... -plugin icount.so,start=0xADDR,stop=0xADDR[,out=FILE]
 *   qemu-system-arm ... -plugin icount.so,mark=0xADDR[,mark=0xADDR...],out=FILE
 *
 * Every instruction except the two markers gets an inline "total += 1"
 * emitted before it, so the count is per executed instruction, not per
 * translation block: a block left early (exception, or an I/O instruction
 * that icount re-executes in a single-instruction block, which QEMU
 * translates without plugin instrumentation) never counts instructions it
 * did not execute, nor any twice.
 * The first instruction of each marker function gets a callback instead,
 * which does its own "+1", so the order of inline op and callback within one
 * instruction never matters:
 *   count = instructions from the start marker's first instruction
 *           (inclusive) to the stop marker's first instruction (exclusive).
 * Each start/stop pair gives one count; counts are appended to FILE as they
 * happen (one decimal per line, flushed, so a killed QEMU keeps them) or, if
 * no out= is given, printed at exit with qemu_plugin_outs (shown by -d plugin).
 *
 * Mark mode (mark=ADDR, up to MAX_MARKS of them, instead of start/stop; out=
 * required): each time a mark function's first instruction executes, the running total of executed
 * instructions *before* it (since boot) is appended to FILE as one line.
 * The difference of two lines is the exact number of instructions from the
 * first mark's first instruction (inclusive) to the second's (exclusive);
 * with a one-instruction mark (bx lr) called by "bl", a region of K
 * instructions between two calls gives a difference of K + 2. The lines are
 * written and flushed before the mark returns, so a host that learns over
 * the UART that the guest passed a mark finds the line already in FILE.
 *
 * Class mode (classes=1, with mark=): every instruction also runs a callback
 * that keeps the counters of host/tinyhost/deploy/cycles.py (ClassCounts, in
 * the order of its COUNTERS), which each mark line lists after the total:
 * instructions per class (from QEMU's disassembly at translation), loads and
 * stores right after a single load/store, registers moved by block transfers,
 * taken branches (the next executed instruction is not the fall-through) and
 * Cortex-M7 dual-issue pairs formed greedily, and for Helium: vector memory and
 * vector data-processing instructions, adjacent vector instructions of the two
 * kinds (the pairs whose beats overlap), low-overhead-loop instructions and their
 * taken loop ends. QEMU's disassembler does not know MVE (it prints LDC/STC/CDP or
 * raw bytes), so Helium and loop instructions are told from their encodings.
 * Slower (a call per instruction); the counts feed a cycle estimate, never the
 * exact instruction count.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu_plugin_api.h"

TH_QEMU_PLUGIN_EXPORT int qemu_plugin_version = TH_QEMU_PLUGIN_API_VERSION;

#define MAX_MARKS 8

enum { C_ALU, C_MUL, C_DIV, C_LOAD, C_STORE, C_LDM, C_STM, C_BRANCH, C_VMEM, C_VOP, C_LOB,
       N_CLASSES };
enum { K_MEM_PIPELINED = N_CLASSES, K_BLOCK_REGS, K_TAKEN, K_PAIRS, K_VOVERLAP, K_LOB_TAKEN,
       N_COUNTERS };

typedef struct {
    uint64_t vaddr;
    uint8_t cls;
    uint8_t size;
    uint8_t regs;
} insn_class;

typedef struct {
    uint64_t start_addr;
    uint64_t stop_addr;
    uint64_t mark_addrs[MAX_MARKS];
    size_t n_marks; /* > 0: mark mode */
    uint64_t total;    /* every instruction executed since boot */
    uint64_t snapshot; /* total at the last start marker */
    int active;
    uint64_t *counts;
    size_t n_counts;
    size_t cap_counts;
    uint64_t restarts;        /* start while already started */
    uint64_t unmatched_stops; /* stop while not started */
    FILE *out;
    int classes;                 /* class mode */
    uint64_t counter[N_COUNTERS]; /* class mode: ClassCounts */
    uint64_t next_vaddr;          /* fall-through of the last instruction (0: none yet) */
    int prev_mem;                 /* the last instruction was a single load/store */
    int pending;                  /* class of an unpaired M7 first-issue candidate, or -1 */
    int prev_cls;                 /* class of the last instruction, or -1 */
} icount_state;

static void on_start(unsigned int vcpu_index, void *userdata)
{
    icount_state *s = userdata;
    (void)vcpu_index;
    if (s->active) {
        s->restarts++;
    }
    s->snapshot = s->total;
    s->active = 1;
    s->total += 1; /* the marker instruction itself */
}

static void on_stop(unsigned int vcpu_index, void *userdata)
{
    icount_state *s = userdata;
    (void)vcpu_index;
    if (s->active) {
        uint64_t count = s->total - s->snapshot;
        if (s->n_counts == s->cap_counts) {
            size_t cap = s->cap_counts ? 2 * s->cap_counts : 64;
            uint64_t *grown = realloc(s->counts, cap * sizeof *grown);
            if (grown != NULL) {
                s->counts = grown;
                s->cap_counts = cap;
            }
        }
        if (s->n_counts < s->cap_counts) {
            s->counts[s->n_counts++] = count;
        }
        if (s->out != NULL) {
            fprintf(s->out, "%" PRIu64 "\n", count);
            fflush(s->out);
        }
        s->active = 0;
    } else {
        s->unmatched_stops++;
    }
    s->total += 1;
}

/* QEMU passes no userdata to translation callbacks; the state pointer is
 * kept here, the one global the plugin ABI forces on us. */
static icount_state *g_state;

static int pairable(int first, int second)
{
    return (first == C_ALU || first == C_LOAD || first == C_STORE) &&
           (second == C_ALU || second == C_LOAD || second == C_STORE || second == C_BRANCH) &&
           (first == C_ALU || second == C_ALU);
}

/* The previous instruction was a taken branch if this one is not its fall-through. */
static void note_fallthrough(icount_state *s, const insn_class *i)
{
    if (s->next_vaddr != 0 && i->vaddr != s->next_vaddr) {
        s->counter[K_TAKEN]++;
        s->counter[K_LOB_TAKEN] += (uint64_t)(s->prev_cls == C_LOB);
    }
    s->next_vaddr = i->vaddr + i->size;
}

/* One executed instruction in class mode (the state machine of cycles.count_classes), after
 * note_fallthrough. */
static void count_class(icount_state *s, const insn_class *i)
{
    s->counter[i->cls]++;
    /* Beats overlap where a vector memory instruction meets a vector data-processing one. */
    s->counter[K_VOVERLAP] += (uint64_t)((i->cls == C_VMEM && s->prev_cls == C_VOP) ||
                                         (i->cls == C_VOP && s->prev_cls == C_VMEM));
    s->prev_cls = i->cls;
    const int mem = i->cls == C_LOAD || i->cls == C_STORE;
    s->counter[K_MEM_PIPELINED] += (uint64_t)(mem && s->prev_mem);
    s->prev_mem = mem;
    if (i->cls == C_LDM || i->cls == C_STM) {
        s->counter[K_BLOCK_REGS] += i->regs;
    }
    if (s->pending >= 0 && pairable(s->pending, i->cls)) {
        s->counter[K_PAIRS]++;
        s->pending = -1;
    } else {
        s->pending = (i->cls == C_ALU || i->cls == C_LOAD || i->cls == C_STORE) ? i->cls : -1;
    }
}

static void on_insn(unsigned int vcpu_index, void *userdata)
{
    (void)vcpu_index;
    note_fallthrough(g_state, userdata);
    count_class(g_state, userdata);
}

static void on_mark(unsigned int vcpu_index, void *userdata)
{
    icount_state *s = g_state;
    (void)vcpu_index;
    if (s->classes) {
        note_fallthrough(s, userdata); /* the call into the mark belongs before the line */
    }
    fprintf(s->out, "%" PRIu64, s->total);
    if (s->classes) {
        for (int k = 0; k < N_COUNTERS; k++) {
            fprintf(s->out, " %" PRIu64, s->counter[k]);
        }
        count_class(s, userdata); /* counted after the line, like the total */
    }
    fputc('\n', s->out);
    fflush(s->out);
    s->total += 1; /* the mark instruction itself */
}

/* Registers in a "{r4, r5, pc}" list (LDM/STM/PUSH/POP/VPUSH/VPOP/VLDM/VSTM). */
static int list_regs(const char *text)
{
    const char *open = strchr(text, '{');
    int n = 0;
    if (open == NULL) {
        return 1;
    }
    for (const char *c = open; *c != '\0' && *c != '}'; c++) {
        n += *c == ',';
    }
    return n + 1;
}

static int starts(const char *m, const char *prefix)
{
    return strncmp(m, prefix, strlen(prefix)) == 0;
}

/* Class of one instruction from its disassembly ("ldr r0, [r1]", "pop {r4, pc}"). */
static insn_class classify(const char *text)
{
    static const char *const conds[] = {"eq", "ne", "cs", "hs", "cc", "lo", "mi", "pl", "vs",
                                        "vc", "hi", "ls", "ge", "lt", "gt", "le", "al"};
    insn_class r = {0, C_ALU, 2, 1};
    char m[16] = {0};
    size_t k = 0;
    while (text[k] != '\0' && text[k] != ' ' && text[k] != '.' && k + 1 < sizeof m) {
        m[k] = text[k];
        k++;
    }
    const char *ops = strchr(text, ' ');
    const int to_pc = ops != NULL && starts(ops + 1, "pc");
    if (starts(m, "ldm") || starts(m, "pop") || starts(m, "vldm") || starts(m, "vpop")) {
        r.cls = C_LDM;
        r.regs = (uint8_t)list_regs(text);
    } else if (starts(m, "stm") || starts(m, "push") || starts(m, "vstm") ||
               starts(m, "vpush")) {
        r.cls = C_STM;
        r.regs = (uint8_t)list_regs(text);
    } else if (strcmp(m, "ldrd") == 0 || strcmp(m, "strd") == 0) {
        r.cls = m[0] == 'l' ? C_LDM : C_STM;
        r.regs = 2;
    } else if (starts(m, "ldr") || strcmp(m, "vldr") == 0 || starts(m, "pld")) {
        r.cls = to_pc ? C_BRANCH : C_LOAD;
    } else if (starts(m, "str") || strcmp(m, "vstr") == 0) {
        r.cls = C_STORE;
    } else if (strcmp(m, "sdiv") == 0 || strcmp(m, "udiv") == 0 || starts(m, "vdiv") ||
               starts(m, "vsqrt")) {
        r.cls = C_DIV;
    } else if (starts(m, "mul") || starts(m, "mla") || starts(m, "mls") || starts(m, "smul") ||
               starts(m, "smla") || starts(m, "smls") || starts(m, "smmul") ||
               starts(m, "smmla") || starts(m, "smmls") || starts(m, "smuad") ||
               starts(m, "smusd") || starts(m, "umul") || starts(m, "umla") ||
               starts(m, "umaal") || starts(m, "vmul") || starts(m, "vmla") ||
               starts(m, "vmls") || starts(m, "vfm") || starts(m, "vnm")) {
        r.cls = C_MUL;
    } else if (strcmp(m, "cbz") == 0 || strcmp(m, "cbnz") == 0 || strcmp(m, "tbb") == 0 ||
               strcmp(m, "tbh") == 0 || to_pc) {
        r.cls = C_BRANCH;
    } else if (m[0] == 'b') {
        const char *rest = m + 1;
        if (*rest == '\0' || strcmp(rest, "l") == 0 || strcmp(rest, "lx") == 0 ||
            strcmp(rest, "x") == 0) {
            r.cls = C_BRANCH;
        }
        for (size_t c = 0; c < sizeof conds / sizeof conds[0]; c++) {
            if (strcmp(rest, conds[c]) == 0) {
                r.cls = C_BRANCH;
            }
        }
    }
    return r;
}

/* Helium and low-overhead-loop instructions from a 32-bit encoding (first halfword hw1,
 * second hw2), or -1 for anything else (classified from its disassembly).
 * Low-overhead loops (Armv8.1-M: DLS, WLS, LE and their tail-predicated forms): hw1 in
 * F000-F07F with hw2 of the form 11x0 xxxx xxxx xxx1 (a BL/BLX there has bit 12 set or bit 0
 * clear). Helium: the coprocessor space (hw1 111x 11xx) outside coprocessors 10 and 11
 * (scalar floating point, which the disassembler knows); its load/store part is hw1
 * 111x 110x (VLDR/VSTR, gathers, scatters, VLD2/VLD4). */
static int encoding_class(uint16_t hw1, uint16_t hw2)
{
    if ((hw1 & 0xFF80u) == 0xF000u && (hw2 & 0xD001u) == 0xC001u) {
        return C_LOB;
    }
    if ((hw1 & 0xEC00u) == 0xEC00u && ((hw2 >> 9) & 7u) != 5u) {
        return (hw1 & 0xEE00u) == 0xEC00u ? C_VMEM : C_VOP;
    }
    return -1;
}

static insn_class *class_of(struct qemu_plugin_insn *insn)
{
    insn_class *c = malloc(sizeof *c); /* lives as long as the translation: never freed */
    char *text = qemu_plugin_insn_disas(insn);
    const uint8_t *bytes = qemu_plugin_insn_data(insn);
    if (c == NULL) {
        free(text);
        return NULL;
    }
    int by_encoding = -1;
    if (bytes != NULL && qemu_plugin_insn_size(insn) == 4) {
        by_encoding = encoding_class((uint16_t)(bytes[0] | bytes[1] << 8),
                                     (uint16_t)(bytes[2] | bytes[3] << 8));
    }
    if (by_encoding >= 0) {
        *c = (insn_class){0, (uint8_t)by_encoding, 4, 1};
    } else if (text != NULL) {
        *c = classify(text);
    } else {
        *c = (insn_class){0, C_ALU, 2, 1};
    }
    free(text);
    c->vaddr = qemu_plugin_insn_vaddr(insn);
    c->size = (uint8_t)qemu_plugin_insn_size(insn);
    return c;
}

static int is_mark(const icount_state *s, uint64_t vaddr)
{
    for (size_t i = 0; i < s->n_marks; i++) {
        if (s->mark_addrs[i] == vaddr) {
            return 1;
        }
    }
    return 0;
}

static void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    icount_state *s = g_state;
    size_t n = qemu_plugin_tb_n_insns(tb);
    (void)id;
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        uint64_t vaddr = qemu_plugin_insn_vaddr(insn);
        if (s->n_marks > 0) {
            insn_class *c = s->classes ? class_of(insn) : NULL;
            if (is_mark(s, vaddr)) {
                qemu_plugin_register_vcpu_insn_exec_cb(insn, on_mark, QEMU_PLUGIN_CB_NO_REGS, c);
            } else {
                qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64,
                                                           &s->total, 1);
                if (c != NULL) {
                    qemu_plugin_register_vcpu_insn_exec_cb(insn, on_insn, QEMU_PLUGIN_CB_NO_REGS,
                                                           c);
                }
            }
        } else if (vaddr == s->start_addr) {
            qemu_plugin_register_vcpu_insn_exec_cb(insn, on_start, QEMU_PLUGIN_CB_NO_REGS, s);
        } else if (vaddr == s->stop_addr) {
            qemu_plugin_register_vcpu_insn_exec_cb(insn, on_stop, QEMU_PLUGIN_CB_NO_REGS, s);
        } else {
            qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64,
                                                       &s->total, 1);
        }
    }
}

static void on_qemu_exit(qemu_plugin_id_t id, void *userdata)
{
    icount_state *s = userdata;
    char line[96];
    (void)id;
    if (s->out == NULL && s->n_marks == 0) {
        for (size_t i = 0; i < s->n_counts; i++) {
            snprintf(line, sizeof line, "icount: %" PRIu64 "\n", s->counts[i]);
            qemu_plugin_outs(line);
        }
    }
    snprintf(line, sizeof line, "icount-total: %" PRIu64 "\n", s->total);
    qemu_plugin_outs(line);
    if (s->restarts != 0 || s->unmatched_stops != 0 || s->active) {
        snprintf(line, sizeof line,
                 "icount-warning: restarts=%" PRIu64 " unmatched_stops=%" PRIu64 " open=%d\n",
                 s->restarts, s->unmatched_stops, s->active);
        qemu_plugin_outs(line);
    }
    if (s->out != NULL) {
        fclose(s->out);
        s->out = NULL;
    }
}

static int parse_addr(const char *text, uint64_t *out)
{
    char *end = NULL;
    unsigned long long v = strtoull(text, &end, 0);
    if (end == text || *end != '\0') {
        return -1;
    }
    /* Thumb symbols carry bit 0; instruction addresses never do. */
    *out = (uint64_t)v & ~(uint64_t)1;
    return 0;
}

TH_QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                              int argc, char **argv);

TH_QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                              int argc, char **argv)
{
    int have_start = 0;
    int have_stop = 0;
    const char *out_path = NULL;
    icount_state *s = calloc(1, sizeof *s);
    (void)info;
    if (s == NULL) {
        return -1;
    }
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "start=", 6) == 0 && parse_addr(a + 6, &s->start_addr) == 0) {
            have_start = 1;
        } else if (strncmp(a, "stop=", 5) == 0 && parse_addr(a + 5, &s->stop_addr) == 0) {
            have_stop = 1;
        } else if (strncmp(a, "mark=", 5) == 0 && s->n_marks < MAX_MARKS &&
                   parse_addr(a + 5, &s->mark_addrs[s->n_marks]) == 0) {
            s->n_marks++;
        } else if (strcmp(a, "classes=1") == 0) {
            s->classes = 1;
        } else if (strncmp(a, "out=", 4) == 0 && a[4] != '\0') {
            out_path = a + 4;
        } else {
            fprintf(stderr,
                    "icount: bad argument '%s' (want start=ADDR,stop=ADDR[,out=FILE] or "
                    "mark=ADDR[,mark=ADDR...],out=FILE)\n",
                    a);
            free(s);
            return -1;
        }
    }
    s->pending = -1;
    s->prev_cls = -1;
    if (s->classes && s->n_marks == 0) {
        fprintf(stderr, "icount: classes=1 needs mark mode\n");
        free(s);
        return -1;
    }
    if (s->n_marks > 0 && (have_start || have_stop || out_path == NULL)) {
        fprintf(stderr, "icount: mark=ADDR takes out=FILE and no start/stop\n");
        free(s);
        return -1;
    }
    if (s->n_marks == 0 && (!have_start || !have_stop || s->start_addr == s->stop_addr)) {
        fprintf(stderr, "icount: need distinct start=ADDR and stop=ADDR\n");
        free(s);
        return -1;
    }
    if (out_path != NULL) {
        s->out = fopen(out_path, "w");
        if (s->out == NULL) {
            fprintf(stderr, "icount: cannot open %s\n", out_path);
            free(s);
            return -1;
        }
    }
    g_state = s;
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
    qemu_plugin_register_atexit_cb(id, on_qemu_exit, s);
    return 0;
}
