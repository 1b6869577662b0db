"""What knows the answers: reference solutions, the mistake catalogue, the hidden tests, the visible checks' data."""
