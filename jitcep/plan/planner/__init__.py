"""Cost-based plan generation (Kolchinsky & Schuster 2018; ZStream section 5).

``statistics`` (rates, selectivities, partitions; the user's) and
``sampling`` (the same estimated from the events) -> ``cardinality`` (the join-order problem of section 3, estimated rows
per operator) -> ``cost`` (cost models over join trees) -> ``algorithms`` (one
module per plan-generation algorithm); :mod:`jitcep.plan.rules.join_order`
runs the chosen one.  ``problem`` is the join-order problem they share.
"""
