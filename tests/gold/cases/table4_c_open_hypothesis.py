"""MemUse A.2.3 Table 4, case c: the record at step 4 is: "Maybe the retries fire too quickly for the server? Not sure yet; checking the history first.\""""

from _table4 import table4_episode

STEP4 = "Maybe the retries fire too quickly for the server? Not sure yet; checking the history first."


def episode():
    return table4_episode("gold-t4c", STEP4)
