"""Writing bucket files and instants: the rewrite of partitions, the files themselves (at their final names
or staged), our instants, and Hudi's own procedure as the other engine."""
