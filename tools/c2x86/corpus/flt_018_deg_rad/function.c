double wrap_degrees_to_rad(double deg)
{
    while (deg >= 180.0)
        deg -= 360.0;
    while (deg < -180.0)
        deg += 360.0;
    return deg * 0.017453292519943295;
}
