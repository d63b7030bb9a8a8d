#include <stdio.h>

long run_stack_vm(const int *code, int len);

int main(void)
{
    int p1[] = {1, 2, 1, 3, 2, 0};
    int p2[] = {1, 6, 5, 4, 1, 7, 3, 0};
    int p3[] = {1, 10, 1, 3, 6, 3, 0};
    int p4[] = {1, 0, 7, 7, 1, 111, 0, 1, 222, 0};
    int p5[] = {1, 5, 7, 7, 1, 111, 0, 1, 222, 0};
    int p6[] = {2, 0};
    int p7[] = {9};
    /* countdown loop: push 5; [dup jz end; push 1; sub; jump-via-push0-jz back]; end: halt */
    int p8[] = {1, 5, 5, 7, 13, 1, 1, 3, 1, 0, 7, 2, 0, 0};
    printf("%ld\n", run_stack_vm(p1, 6));
    printf("%ld\n", run_stack_vm(p2, 8));
    printf("%ld\n", run_stack_vm(p3, 7));
    printf("%ld\n", run_stack_vm(p4, 10));
    printf("%ld\n", run_stack_vm(p5, 10));
    printf("%ld\n", run_stack_vm(p6, 2));
    printf("%ld\n", run_stack_vm(p7, 1));
    printf("%ld\n", run_stack_vm(p8, 14));
    return 0;
}
