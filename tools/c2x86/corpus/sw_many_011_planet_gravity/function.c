double weight_on_planet(double earth_kg, int planet)
{
    double ratio;
    switch (planet) {
    case 0: ratio = 0.378; break;  /* Mercury */
    case 1: ratio = 0.907; break;  /* Venus */
    case 2: ratio = 1.0; break;    /* Earth */
    case 3: ratio = 0.377; break;  /* Mars */
    case 4: ratio = 2.528; break;  /* Jupiter */
    case 5: ratio = 1.065; break;  /* Saturn */
    case 6: ratio = 0.886; break;  /* Uranus */
    case 7: ratio = 1.137; break;  /* Neptune */
    default:
        return -1.0;
    }
    return earth_kg * ratio;
}
