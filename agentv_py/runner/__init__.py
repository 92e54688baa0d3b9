"""Running an eval: target runners, one case to one row (`engine`), and the `Run` that drives
all cases concurrently and owns every thread and process it starts (`run`)."""
