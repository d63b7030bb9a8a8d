#include <stdio.h>

int roman_to_int(const char *s);

int main(void)
{
    const char *v[] = {"", "I", "IV", "IX", "XLII", "MCMXCIV", "MMXXIV", "CDXLIV", "MMMCMXCIX", "ABC", "iv"};
    for (int i = 0; i < 11; i++)
        printf("%s -> %d\n", v[i], roman_to_int(v[i]));
    return 0;
}
