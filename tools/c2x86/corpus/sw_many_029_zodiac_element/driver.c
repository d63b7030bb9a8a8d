#include <stdio.h>

int sign_element(int sign, int *modality);

int main(void)
{
    for (int s = -1; s <= 12; s++) {
        int m;
        int e = sign_element(s, &m);
        printf("%d -> %c %d\n", s, e, m);
    }
    return 0;
}
