package org.yarndrf.nm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import org.junit.jupiter.api.Test;

class GpuCardsTest {
  @Test
  void aNodeAttributeValueListsTheMibOfEachCard() {
    assertEquals(Arrays.asList(10240L, 10240L), GpuCards.sizes("10240_10240"));
    assertEquals(Collections.singletonList(81920L), GpuCards.sizes("81920"));
  }

  @Test
  void aValueThatIsNoCardListIsRefusedNamingWhatIsWrong() {
    for (String bad : new String[] {"", " ", "10240,10240", "-1", "0_10240", "10240_", "1e4",
        "+5", "99999999999999999999", "ten"}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GpuCards.sizes(bad), bad);
      assertTrue(e.getMessage().contains("card") , e.getMessage());
    }
    String many = String.join("_", Collections.nCopies(GpuCards.MAX_CARDS + 1, "1024"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> GpuCards.sizes(many))
        .getMessage().contains("at most 64 cards"));
  }

  @Test
  void theCardsOfAContainerGoAndComeBackThroughItsAllocationTag() {
    String tag = GpuCards.tag(Arrays.asList(0, 3));
    assertEquals("yarn-drf.gpu-cards=0,3", tag);
    assertEquals(Arrays.asList(0, 3), GpuCards.fromTags(new HashSet<>(Arrays.asList("other", tag))));
  }

  @Test
  void aContainerWithoutACardsTagHasNoCards() {
    assertNull(GpuCards.fromTags(null));
    assertNull(GpuCards.fromTags(Collections.singleton("spark-executor")));
  }

  @Test
  void aCardsTagThatIsNotDistinctIndicesIsRefused() {
    for (String bad : new String[] {"-1", "0,0", "64", "", "1,", "a", "007", "0;1"}) {
      assertThrows(IllegalArgumentException.class,
          () -> GpuCards.fromTags(Collections.singleton(GpuCards.TAG_PREFIX + bad)), bad);
    }
    assertThrows(IllegalArgumentException.class, () -> GpuCards.fromTags(new HashSet<>(Arrays.asList(
        GpuCards.TAG_PREFIX + "0", GpuCards.TAG_PREFIX + "1"))));
  }
}
