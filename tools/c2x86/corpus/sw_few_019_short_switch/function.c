signed char channel_gain(unsigned short channel)
{
    signed char g;
    switch (channel) {
    case 1:
        g = -12;
        break;
    case 2:
        g = 6;
        break;
    case 65535:
        g = -128;
        break;
    default:
        g = (signed char)(channel & 0x3F);
    }
    return g;
}
