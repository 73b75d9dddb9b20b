"""The medic's record: the transcript journal, written before anything is published."""
