"""Examples built on the course package, beside it: what students and instructors install holds none of them."""
