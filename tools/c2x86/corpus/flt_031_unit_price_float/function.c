float unit_price_per_100g(float price, float ounces)
{
    if (ounces <= 0.0f)
        return -1.0f;
    float grams = ounces * 28.349523f;
    return price / grams * 100.0f;
}
