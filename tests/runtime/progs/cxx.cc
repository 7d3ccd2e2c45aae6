// SPDX-License-Identifier: GPL-2.0-only
// C++: virtual calls, templates, constructors and std::thread workers.
// Methods are counted under their names as nm -C shows them.
#include <memory>
#include <thread>
#include <vector>

#include "counts.h"

#define PRINT_AS(counter, symbol)                            \
	printf("count %ld %s %lu\n", (long)getpid(), symbol, \
	       __atomic_load_n(&n_##counter, __ATOMIC_RELAXED))

volatile long sink;
COUNTER(square_area);
COUNTER(circle_area);
COUNTER(twice_long);
COUNTER(square_ctor);
COUNTER(run);

struct Shape {
	virtual ~Shape() = default;
	virtual double area() const = 0;
};

struct Square : Shape {
	double side;
	TRACED explicit Square(double s)
	    : side(s)
	{
		HIT(square_ctor);
	}
	TRACED double area() const override
	{
		HIT(square_area);
		return side * side;
	}
};

struct Circle : Shape {
	double r;
	explicit Circle(double radius)
	    : r(radius)
	{
	}
	TRACED double area() const override
	{
		HIT(circle_area);
		return 3.14159 * r * r;
	}
};

template <typename T> TRACED T twice(T v)
{
	HIT(twice_long);
	return v + v;
}

TRACED void run(int id)
{
	HIT(run);
	std::vector<std::unique_ptr<Shape>> shapes;

	for (int i = 0; i < 50; i++) {
		if (i % 2)
			shapes.emplace_back(new Square(i + id));
		else
			shapes.emplace_back(new Circle(i));
	}
	for (auto &s : shapes)
		sink += (long)s->area();
	sink += twice<long>(id);
}

int main()
{
	std::vector<std::thread> threads;

	for (int t = 0; t < 4; t++)
		threads.emplace_back(run, t);
	for (auto &t : threads)
		t.join();
	run(99);
	PRINT_AS(square_area, "Square::area");
	PRINT_AS(circle_area, "Circle::area");
	PRINT_AS(twice_long, "twice<long>");
	PRINT_AS(square_ctor, "Square::Square");
	PRINT_AS(run, "run");
	return 0;
}
