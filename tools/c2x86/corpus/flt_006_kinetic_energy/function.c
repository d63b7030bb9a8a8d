float kinetic_energy(float mass_kg, float speed_kmh)
{
    float v = speed_kmh / 3.6f;
    return 0.5f * mass_kg * v * v;
}
