# Tests: filled in below
