double discounted_price(double price, int quantity)
{
    double total = price * quantity;
    if (quantity >= 100)
        total *= 0.775;
    else if (quantity >= 50)
        total *= 0.85;
    else if (quantity >= 10)
        total *= 0.9;
    total *= 1.0725;
    return total;
}
