"""The papers' worked examples on small hand-built tables.

Each test quotes the query from the paper, states how it is written in
jitcep's language, and builds a table where some candidates match and others
fail for a stated reason.  Expected matches are enumerated by hand from the
paper and docs/semantics.md, never produced by running jitcep.
"""

from __future__ import annotations

from semantic_helpers import M, column_values, events, matches

# --------------------------------------------------------------------------
# SASE (Wu, Diao, Rizvi, SIGMOD 2006), section 2.1 and 2.3
# --------------------------------------------------------------------------


def test_sase_q1_shelf_readings_of_food_from_manufacturer_1():
    # Q1: EVENT  SHELF-READING
    #     WHERE  category = 'food' ∧ manufacturer_id = '1'
    # (no WITHIN in the paper: a single event needs none; jitcep asks for it explicitly)
    df = events("type ts category manufacturer_id",
                ("SHELF-READING", 0, "food", "1"),      # match
                ("SHELF-READING", 1, "food", "2"),      # wrong manufacturer
                ("COUNTER-READING", 2, "food", "1"),    # wrong event type
                ("SHELF-READING", 3, "drink", "1"),     # wrong category
                ("SHELF-READING", 4, "food", "1"))      # match
    q = """PATTERN SHELF-READING x
           WHERE x.category = 'food' AND x.manufacturer_id = '1'
           WITHIN UNBOUNDED"""
    assert matches(q, df) == M((0,), (4,))


# Q2 table: hours since opening; one row per RFID reading
SHOPLIFT = events(
    "type ts id",
    ("SHELF-READING", 0, 1),    # 0: item 1 picked
    ("SHELF-READING", 1, 2),    # 1: item 2 picked
    ("COUNTER-READING", 2, 1),  # 2: item 1 checked out
    ("EXIT-READING", 3, 1),     # 3: item 1 leaves -> (0,3) not shoplifting: counter 2 in between
    ("EXIT-READING", 4, 2),     # 4: item 2 leaves unpaid -> (1,4) shoplifting
    ("SHELF-READING", 5, 3),    # 5: item 3 picked
    ("COUNTER-READING", 6, 2),  # 6: item 2 at the counter *after* leaving: too late to matter
    ("EXIT-READING", 18, 3),    # 7: item 3 leaves 13 h later -> outside WITHIN 12 hours
    ("SHELF-READING", 20, 4),   # 8: item 4 picked
    ("COUNTER-READING", 21, 3), # 9: another item at the counter: different id, does not excuse item 4
    ("EXIT-READING", 22, 4),    # 10: item 4 leaves -> (8,10) shoplifting
)


def test_sase_q2_shoplifting_with_equivalence_test():
    # Q2: EVENT SEQ(SHELF-READING x, !(COUNTER-READING y), EXIT-READING z)
    #     WHERE x.id = y.id ∧ x.id = z.id   /* or equivalently, [id] */
    #     WITHIN 12 hours
    q = """PATTERN SEQ(SHELF-READING x, !COUNTER-READING y, EXIT-READING z)
           WHERE [id]
           WITHIN 12 hours"""
    assert matches(q, SHOPLIFT, time_unit="h") == M((1, 4), (8, 10))


def test_sase_q2_shoplifting_with_explicit_predicates():
    # the spelled-out form of Q2's WHERE clause gives the same result
    q = """PATTERN SEQ(SHELF-READING x, !COUNTER-READING y, EXIT-READING z)
           WHERE x.id = y.id AND x.id = z.id
           WITHIN 12 hours"""
    assert matches(q, SHOPLIFT, time_unit="h") == M((1, 4), (8, 10))


def test_sase_misplaced_inventory():
    # EVENT SEQ(SHELF-READING x, SHELF-READING y,
    #           !(ANY(COUNTER-READING, SHELF-READING) z))
    # WHERE [id] ∧ x.shelf_id ≠ y.shelf_id ∧ x.shelf_id = z.shelf_id
    # WITHIN 1 hour
    # A negated end: no reading z of the item back at shelf x.shelf_id after y, within an hour of x
    # (docs/semantics.md §7).  Time in minutes; each item in its own hour-long stretch.
    df = events(
        "type ts id shelf_id",
        ("SHELF-READING", 0, 1, 1),      # 0  item 1 at shelf 1
        ("SHELF-READING", 10, 1, 2),     # 1  ... then shelf 2, never back -> (0,1) misplaced
        ("SHELF-READING", 100, 2, 1),    # 2  item 2 at shelf 1
        ("SHELF-READING", 105, 2, 2),    # 3  ... shelf 2
        ("SHELF-READING", 120, 2, 1),    # 4  ... back at shelf 1 within the hour -> kills (2,3);
                                         #    (3,4) is itself a move 2 -> 1 with nothing after -> match;
                                         #    (2,4) is the same shelf twice -> no
        ("SHELF-READING", 200, 3, 1),    # 5  item 3 at shelf 1
        ("SHELF-READING", 210, 3, 2),    # 6  ... shelf 2 -> (5,6)
        ("COUNTER-READING", 230, 3, None),  # 7  at the counter: its shelf_id is NULL, so
                                         #    x.shelf_id = z.shelf_id is NULL and rejects (§4): no kill.
                                         #    (SASE instead treats a missing attribute as TRUE.)
        ("SHELF-READING", 300, 4, 1),    # 8  item 4 at shelf 1
        ("SHELF-READING", 310, 4, 2),    # 9  ... shelf 2 -> (8,9): the return at 370 is 70 min after x
        ("SHELF-READING", 370, 4, 1),    # 10 ... back at shelf 1, outside the hour of x=8;
                                         #    (9,10) spans exactly 60 min -> match
        ("SHELF-READING", 400, 5, 1),    # 11 item 5 at shelf 1
        ("SHELF-READING", 410, 5, 1),    # 12 ... same shelf again -> x.shelf_id = y.shelf_id -> no
    )
    q = """PATTERN SEQ(SHELF-READING x, SHELF-READING y,
                       NOT(ANY(COUNTER-READING, SHELF-READING) z))
           WHERE [id] AND x.shelf_id != y.shelf_id AND x.shelf_id = z.shelf_id
           WITHIN 1 hour"""
    assert matches(q, df, time_unit="min") == M((0, 1), (3, 4), (5, 6), (8, 9), (9, 10))


# --------------------------------------------------------------------------
# ZStream (Mei, Madden, SIGMOD 2009), section 3 and 6.4
# Stock stream schema (id, name, price, volume, ts); every event has type Stock.
# --------------------------------------------------------------------------


def test_zstream_query1_sequence_pattern():
    # PATTERN T1;T2;T3
    # WHERE   T1.name = T3.name AND T2.name = 'Google'
    # AND     T1.price > (1 + x%) * T2.price AND T3.price < (1 - y%) * T2.price
    # WITHIN  10 secs
    # RETURN  T1, T2, T3
    # with x = y = 10.  Time in seconds.
    df = events(
        "type ts name price",
        ("Stock", 0, "IBM", 120.0),     # 0
        ("Stock", 1, "MSFT", 150.0),    # 1
        ("Stock", 2, "Google", 100.0),  # 2  T2: T1 needs price > 110, T3 price < 90
        ("Stock", 3, "IBM", 85.0),      # 3  (0,2,3) match
        ("Stock", 4, "MSFT", 95.0),     # 4  (1,2,4): 95 is not < 90
        ("Stock", 5, "Google", 110.0),  # 5  T2: T1 needs price > 121: only MSFT1, which has no later MSFT < 99
        ("Stock", 6, "IBM", 89.0),      # 6  (0,2,6) match; (0,5,6): 120 is not > 121
        ("Stock", 13, "IBM", 80.0),     # 7  (0,2,7): spans 13 s > 10 s
    )
    q = """PATTERN SEQ(Stock t1, Stock t2, Stock t3)
           WHERE t1.name = t3.name AND t2.name = 'Google'
             AND t1.price > (1 + 0.10) * t2.price AND t3.price < (1 - 0.10) * t2.price
           WITHIN 10 seconds
           RETURN t1, t2, t3"""
    assert matches(q, df, time_unit="s") == M((0, 2, 3), (0, 2, 6))


def test_zstream_query2_negation_pattern():
    # PATTERN T1;!T2;T3
    # WHERE   T1.name = T2.name = T3.name
    # AND     T1.price > x AND T2.price < x AND T3.price > x * (1 + 20%)
    # WITHIN  10 secs
    # RETURN  T1, T3
    # with x = 100: a rise to above 120 from above 100 without a dip below 100 in between.
    df = events(
        "type ts name price",
        ("Stock", 0, "IBM", 105.0),    # 0
        ("Stock", 1, "IBM", 110.0),    # 1
        ("Stock", 2, "IBM", 95.0),     # 2  dip: kills every pair spanning it ((0,3) (1,3) (0,5) ...)
        ("Stock", 3, "IBM", 125.0),    # 3
        ("Stock", 4, "IBM", 101.0),    # 4
        ("Stock", 5, "IBM", 130.0),    # 5  (3,5) (4,5) match
        ("Stock", 6, "MSFT", 90.0),    # 6  below 100 but another name: kills nothing
        ("Stock", 7, "IBM", 121.0),    # 7  (3,7) (4,7) (5,7) match
        ("Stock", 15, "IBM", 140.0),   # 8  (5,8) (7,8) match; (3,8) (4,8) span more than 10 s
    )
    q = """PATTERN SEQ(Stock t1, !Stock t2, Stock t3)
           WHERE [name] AND t1.price > 100 AND t2.price < 100 AND t3.price > 100 * (1 + 0.20)
           WITHIN 10 seconds
           RETURN t1, t3"""
    assert matches(q, df, time_unit="s") == M((3, 5), (4, 5), (3, 7), (4, 7), (5, 7), (5, 8), (7, 8))


def test_zstream_query3_kleene_closure_pattern():
    # PATTERN T1;T2^5;T3
    # WHERE   T1.name = T3.name
    # WHERE   T2.name = 'Google'
    # AND     sum(T2.volume) > v
    # AND     T3.price > (1 + 20%) * T1.price
    # WITHIN  10 secs
    # RETURN  T1, sum(T2.volume), T3
    # T2^5 groups 5 *successive* Google events (ZStream 4.4.5: a sliding window of size 5 over the
    # qualifying middle events) = jitcep's kleene="maximal" with a closure count (semantics.md §6.2).
    # v = 1000.
    df = events(
        "type ts name price volume",
        ("Stock", 0, "IBM", 100.0, 10),     # 0  T1
        ("Stock", 1, "Google", 500.0, 300),  # 1
        ("Stock", 2, "Google", 500.0, 200),  # 2
        ("Stock", 3, "Google", 500.0, 200),  # 3
        ("Stock", 4, "Google", 500.0, 200),  # 4
        ("Stock", 5, "Google", 500.0, 200),  # 5  Googles 1-5: volume 1100 > 1000
        ("Stock", 6, "IBM", 125.0, 10),      # 6  (0, 1-5, 6): 125 > 120
        ("Stock", 7, "Google", 500.0, 100),  # 7  window 2-5,7: volume 900, fails the sum
        ("Stock", 8, "IBM", 130.0, 10),      # 8  (0, 1-5, 8); T1=6 has only one Google before 8
        ("Stock", 9, "IBM", 110.0, 10),      # 9  110 is not > 120
        ("Stock", 12, "IBM", 150.0, 10),     # 10 T1=0 is 12 s earlier; no later T1 has 5 Googles after it
    )
    q = """PATTERN SEQ(Stock t1, Stock{5} t2[], Stock t3)
           WHERE t1.name = t3.name AND t2.name = 'Google'
             AND sum(t2.volume) > 1000 AND t3.price > (1 + 0.20) * t1.price
           WITHIN 10 seconds
           RETURN t1, sum(t2.volume) AS total_volume, t3"""
    got = column_values(q, df, "total_volume", variables=("t1", "t2", "t3"), time_unit="s", kleene="maximal")
    assert got == M((0, (1, 2, 3, 4, 5), 6, 1100), (0, (1, 2, 3, 4, 5), 8, 1100))


def test_zstream_query7_negation_push_down():
    # PATTERN IBM;!Sun;Oracle
    # WITHIN  200 units
    df = events(
        "type ts",
        ("IBM", 0),       # 0
        ("Oracle", 50),   # 1  (0,1) match
        ("Sun", 100),     # 2
        ("Oracle", 150),  # 3  (0,3): Sun2 in between
        ("IBM", 160),     # 4
        ("Oracle", 250),  # 5  (4,5) match; (0,5) spans 250 > 200
        ("IBM", 300),     # 6
        ("Sun", 320),     # 7
        ("IBM", 330),     # 8
        ("Oracle", 400),  # 9  (8,9) match; (6,9): Sun7 in between; (4,9) spans 240
    )
    q = "PATTERN SEQ(IBM i, !Sun s, Oracle o) WITHIN 200"
    assert matches(q, df) == M((0, 1), (4, 5), (8, 9))


# --------------------------------------------------------------------------
# SASE+ (Agrawal et al., SIGMOD 2008), Figure 1
# --------------------------------------------------------------------------

# hours
SASEPLUS_Q1 = events(
    "type ts tag_id",
    ("Shelf", 0, 1),      # 0
    ("Shelf", 1, 1),      # 1  a second shelf reading of tag 1: its own run
    ("Register", 2, 1),   # 2  tag 1 is paid for: kills (0,3) and (1,3)
    ("Exit", 3, 1),       # 3
    ("Shelf", 4, 2),      # 4
    ("Exit", 5, 2),       # 5  (4,5) shoplifting
    ("Exit", 6, 2),       # 6  skip till next match: the run from 4 ended at exit 5, so no (4,6)
    ("Shelf", 7, 3),      # 7
    ("Register", 8, 4),   # 8  another tag: does not excuse tag 3
    ("Exit", 9, 3),       # 9  (7,9) shoplifting
    ("Shelf", 10, 5),     # 10
    ("Exit", 23, 5),      # 11 13 hours later: outside WITHIN 12 hours
)


def test_sase_plus_query1_shoplifting_skip_till_next_match():
    # PATTERN SEQ(Shelf a, ~(Register b), Exit c)
    # WHERE skip_till_next_match(a, b, c) {
    #     a.tag_id = b.tag_id
    #     and a.tag_id = c.tag_id
    #     /* equivalently, [tag_id] */ }
    # WITHIN 12 hours
    q = "PATTERN SEQ(Shelf a, ~Register b, Exit c) WHERE [tag_id] WITHIN 12 hours"
    assert matches(q, SASEPLUS_Q1, time_unit="h", strategy="skip_till_next_match") == M((4, 5), (7, 9))


def test_sase_plus_query1_under_skip_till_any_match_adds_later_exits():
    # the same query with the default strategy also pairs shelf 4 with the second exit 6
    q = "PATTERN SEQ(Shelf a, ~Register b, Exit c) WHERE [tag_id] WITHIN 12 hours"
    assert matches(q, SASEPLUS_Q1, time_unit="h") == M((4, 5), (4, 6), (7, 9))


def test_sase_plus_query2_contaminated_shipments():
    # PATTERN SEQ(Alert a, Shipment+ b[])
    # WHERE skip_till_any_match(a, b[]) {
    #     a.type = 'contaminated'
    #     and b[1].from = a.site
    #     and b[i].from = b[i-1].to }
    # WITHIN 3 hours
    # jitcep reserves a.type for the event's type name (semantics.md §4), so the alert's own
    # type attribute is called `kind` here.  Time in minutes.
    df = events(
        "type ts kind site from to",
        ("Alert", 0, "contaminated", "X", None, None),  # 0
        ("Shipment", 10, None, None, "X", "Y"),          # 1  from the site: a series starts
        ("Shipment", 20, None, None, "X", "Z"),          # 2  from the site: another series
        ("Shipment", 30, None, None, "Y", "W"),          # 3  continues 1 (Y), not 2 (Z)
        ("Shipment", 40, None, None, "Q", "R"),          # 4  unrelated
        ("Shipment", 50, None, None, "Z", "V"),          # 5  continues 2 (Z), not 1
        ("Alert", 55, "ok", "Q", None, None),            # 6  not contaminated: starts nothing
        ("Shipment", 200, None, None, "W", "U"),         # 7  would continue 1,3 but 200 min > 3 hours
    )
    q = """PATTERN SEQ(Alert a, Shipment+ b[])
           WHERE a.kind = 'contaminated' AND b[1].from = a.site AND b[i].from = b[i-1].to
           WITHIN 3 hours"""
    assert matches(q, df, time_unit="min", strategy="skip_till_any_match") == M(
        (0, (1,)), (0, (1, 3)), (0, (2,)), (0, (2, 5)))


def test_sase_plus_query3_stock_trend_skip_till_next_match():
    # PATTERN SEQ(Stock+ a[], Stock b)
    # WHERE skip_till_next_match(a[], b) {
    #     [symbol]
    #     and a[1].volume > 1000
    #     and a[i].price > avg(a[..i-1].price)
    #     and b.volume < 80%*a[a.LEN].volume }
    # WITHIN 1 hour
    # jitcep's language has no prefix aggregate a[..i-1], so the trend predicate is the iterative
    # a[i].price > a[i-1].price (the agreed syntax).  Every event with volume > 1000 starts a run
    # (SASE+ §4.1: "e1 and e3 both satisfy the begin condition and initiate two runs").  Time in minutes.
    df = events(
        "type ts symbol price volume",
        ("Stock", 0, "IBM", 10.0, 1200),   # 0  run R0 starts (1200 > 1000)
        ("Stock", 1, "IBM", 12.0, 900),    # 1  R0 takes it (12 > 10) *and* proceeds: 900 < 0.8*1200 -> ([0], 1)
        ("Stock", 2, "MSFT", 50.0, 5000),  # 2  other symbol: skipped by IBM runs; its own run finds no MSFT
        ("Stock", 3, "IBM", 11.0, 1100),   # 3  R0 skips it (11 < 12); run R3 starts (1100 > 1000)
        ("Stock", 4, "IBM", 13.0, 1400),   # 4  R0 takes it (13 > 12), R3 takes it (13 > 11); run R4 starts
        ("Stock", 5, "IBM", 9.0, 1000),    # 5  volume drop: 1000 < 0.8*1400 closes R0 [0,1,4], R3 [3,4], R4 [4];
                                           #    not taken (9 < 13); starts no run (1000 is not > 1000)
    )
    q = """PATTERN SEQ(Stock+ a[], Stock b)
           WHERE [symbol] AND a[1].volume > 1000 AND a[i].price > a[i-1].price
             AND b.volume < 0.8 * a[a.LEN].volume
           WITHIN 1 hour"""
    assert matches(q, df, time_unit="min", strategy="skip_till_next_match") == M(
        ((0,), 1), ((0, 1, 4), 5), ((3, 4), 5), ((4,), 5))
