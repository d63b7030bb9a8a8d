int tariff_cents(int zone, int band, int minutes)
{
    int base;
    switch (zone) {
    case 0: base = 10; break;
    case 1: base = 14; break;
    case 2: base = 19; break;
    case 3: base = 25; break;
    case 4: base = 32; break;
    case 5: base = 40; break;
    default: return -1;
    }
    switch (band) {
    case 0:
        base = base * 3 / 2;
        break;
    case 1:
        break;
    case 2:
        base = base / 2;
        break;
    default:
        return -2;
    }
    return base * minutes;
}
