"""MemUse A.2.3 Table 4, case b: the record at step 4 is: "Plan: the three attempts fire back to back, so I will add a backoff delay between retries in fetch().\""""

from _table4 import table4_episode

STEP4 = (
    "Plan: the three attempts fire back to back, so I will add a backoff delay between retries in fetch()."
)


def episode():
    return table4_episode("gold-t4b", STEP4)
