"""MemUse A.2.3 Table 4, case a: the record at step 4 is: "Check the recent history of the client module.\""""

from _table4 import table4_episode

STEP4 = "Check the recent history of the client module."


def episode():
    return table4_episode("gold-t4a", STEP4)
