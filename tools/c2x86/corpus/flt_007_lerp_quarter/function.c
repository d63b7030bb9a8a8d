static float lerp(float a, float b, float t)
{
    return a + (b - a) * t;
}

float lerp_steps(float a, float b)
{
    float q1 = lerp(a, b, 0.25f);
    float q2 = lerp(a, b, 0.5f);
    float q3 = lerp(a, b, 0.75f);
    return q1 * 1.5f + q2 * 0.625f - q3 * 0.0625f;
}
