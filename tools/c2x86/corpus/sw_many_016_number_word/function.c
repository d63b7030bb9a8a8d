#include <string.h>

static const char *word_for(int d)
{
    switch (d) {
    case 0: return "zero";
    case 1: return "one";
    case 2: return "two";
    case 3: return "three";
    case 4: return "four";
    case 5: return "five";
    case 6: return "six";
    case 7: return "seven";
    case 8: return "eight";
    case 9: return "nine";
    }
    return "?";
}

int digit_words(unsigned n, char *buf, int cap)
{
    char digits[16];
    int nd = 0;
    do {
        digits[nd++] = (char)(n % 10);
        n /= 10;
    } while (n);
    int len = 0;
    for (int i = nd - 1; i >= 0; i--) {
        const char *w = word_for(digits[i]);
        int wl = (int)strlen(w);
        if (len + wl + 2 > cap)
            return -1;
        if (i != nd - 1)
            buf[len++] = '-';
        memcpy(buf + len, w, (size_t)wl);
        len += wl;
    }
    buf[len] = '\0';
    return len;
}
