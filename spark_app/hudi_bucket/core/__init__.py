"""The pure core: Hudi's bucket math, rules, configs and timeline model. No I/O, no Spark."""
