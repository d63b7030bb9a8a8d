#include <stdio.h>
#include <string.h>

size_t base64_encode(const unsigned char *in, size_t n, char *out);

int main(void)
{
    char out[128];
    const char *v[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar", "Many hands make light work."};
    for (int i = 0; i < 8; i++) {
        size_t n = base64_encode((const unsigned char *)v[i], strlen(v[i]), out);
        printf("%zu %s\n", n, out);
    }
    unsigned char bin[] = {0x00, 0xFF, 0xFE, 0x80, 0x7F};
    base64_encode(bin, 5, out);
    printf("%s\n", out);
    return 0;
}
