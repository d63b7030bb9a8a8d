float season_mean_temp(int month, int southern)
{
    float t;
    switch (month) {
    case 12: case 1: case 2:
        t = -2.5f;
        break;
    case 3: case 4: case 5:
        t = 9.75f;
        break;
    case 6: case 7: case 8:
        t = 21.125f;
        break;
    case 9: case 10: case 11:
        t = 11.0f;
        break;
    default:
        return -999.0f;
    }
    if (southern)
        t = 19.0f - t * 0.5f;
    return t;
}
