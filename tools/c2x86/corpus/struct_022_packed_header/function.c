#include <stdint.h>

struct header {
    uint16_t magic;
    uint8_t version;
    uint8_t flags;
    uint32_t length;
    int16_t offset;
};

int parse_header(const unsigned char *buf, int n, struct header *h)
{
    if (n < 10)
        return -1;
    h->magic = (uint16_t)(buf[0] | (buf[1] << 8));
    h->version = buf[2];
    h->flags = buf[3];
    h->length = (uint32_t)buf[4] | ((uint32_t)buf[5] << 8) | ((uint32_t)buf[6] << 16) | ((uint32_t)buf[7] << 24);
    h->offset = (int16_t)(uint16_t)(buf[8] | (buf[9] << 8));
    if (h->magic != 0xCAFE)
        return -2;
    return h->version > 3 ? -3 : 0;
}
