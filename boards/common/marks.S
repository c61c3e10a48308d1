/*
 * Instruction-count markers watched by tools/qemu-icount. Written in
 * assembly so each is exactly one instruction and the compiler can neither
 * inline nor drop the calls.
 */
    .syntax unified
    .thumb

    .section .text.th_mark_start, "ax", %progbits
    .global th_mark_start
    .type th_mark_start, %function
    .thumb_func
th_mark_start:
    bx lr
    .size th_mark_start, . - th_mark_start

    .section .text.th_mark_stop, "ax", %progbits
    .global th_mark_stop
    .type th_mark_stop, %function
    .thumb_func
th_mark_stop:
    bx lr
    .size th_mark_stop, . - th_mark_stop

/*
 * th_icount_mark: the plugin's mark mode (mark=ADDR) appends the running
 * instruction total each time this runs; the interpreter calls it around
 * every op of a profiled invoke (firmware/interpreter/th_interp.c).
 */
    .section .text.th_icount_mark, "ax", %progbits
    .global th_icount_mark
    .type th_icount_mark, %function
    .thumb_func
th_icount_mark:
    bx lr
    .size th_icount_mark, . - th_icount_mark
