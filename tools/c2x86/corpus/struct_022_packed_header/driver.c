#include <stdio.h>
#include <stdint.h>

struct header {
    uint16_t magic;
    uint8_t version;
    uint8_t flags;
    uint32_t length;
    int16_t offset;
};

int parse_header(const unsigned char *buf, int n, struct header *h);

int main(void)
{
    unsigned char b1[] = {0xFE, 0xCA, 1, 0x80, 0x10, 0x00, 0x00, 0x00, 0xFF, 0xFF};
    unsigned char b2[] = {0xFE, 0xCA, 7, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x80};
    unsigned char b3[] = {0xCA, 0xFE, 1, 0, 0, 0, 0, 0, 0, 0};
    unsigned char *bs[] = {b1, b2, b3, b1};
    int ns[] = {10, 10, 10, 9};
    for (int i = 0; i < 4; i++) {
        struct header h = {0, 0, 0, 0, 0};
        int r = parse_header(bs[i], ns[i], &h);
        printf("%d: magic %#x v %u f %#x len %u off %d\n", r, h.magic, h.version, h.flags, (unsigned)h.length, h.offset);
    }
    return 0;
}
